package memory

import (
	"bytes"
	"encoding/json"

	"github.com/ctxhost/ctxhost/sdk"
)

// Op names.
const (
	opStore  = "store"
	opGet    = "get"
	opDelete = "delete"
	opList   = "list"
)

type storeArgs struct {
	Key         string          `json:"key"`
	Value       json.RawMessage `json:"value"`
	Description string          `json:"description"`
	Importance  *float64        `json:"importance"`
}

type storeResult struct {
	Key      string `json:"key"`
	Replaced bool   `json:"replaced"`
	Dropped  string `json:"dropped,omitempty"` // entry deleted to respect max_entries
}

// store inserts or replaces an entry; the entry counts as used now and is
// back in the index. With max_entries reached, a new key deletes the first
// entry in eviction order, evicted entries first.
func (s *memorySession) store(raw json.RawMessage) (json.RawMessage, error) {
	var a storeArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := validKey(a.Key); err != nil {
		return nil, err
	}
	value, err := canonicalValue(a.Value)
	if err != nil {
		return nil, err
	}
	importance := defaultImportance
	if a.Importance != nil {
		importance = *a.Importance
	}
	if err := validImportance(importance); err != nil {
		return nil, err
	}
	res := storeResult{Key: a.Key}
	if _, ok := s.entries[a.Key]; ok {
		res.Replaced = true
	} else if s.maxEntries > 0 && len(s.entries) >= s.maxEntries {
		victim := s.sortedBy(all, evictedFirst)[0]
		delete(s.entries, victim.Key)
		res.Dropped = victim.Key
	}
	e := &entry{Key: a.Key, Value: value, Description: a.Description, Importance: importance}
	s.touch(e)
	s.entries[a.Key] = e
	return sdk.EncodeResult(res)
}

// evictedFirst orders evicted entries before indexed ones, each group in
// eviction order.
func evictedFirst(a, b *entry) int {
	if a.Evicted != b.Evicted {
		if a.Evicted {
			return -1
		}
		return 1
	}
	return evictionOrder(a, b)
}

// canonicalValue checks that v is a JSON value other than null and returns
// it compacted, so equal values give equal state bytes.
func canonicalValue(v json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, sdk.InvalidArgs("value is required (any JSON value but null)")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t); err != nil {
		return nil, sdk.InvalidArgs("value: %v", err)
	}
	return b.Bytes(), nil
}

type keyArgs struct {
	Key string `json:"key"`
}

// lookup decodes {key} and finds the entry.
func (s *memorySession) lookup(raw json.RawMessage) (*entry, error) {
	var a keyArgs
	if err := sdk.DecodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.Key == "" {
		return nil, sdk.InvalidArgs("key is required")
	}
	e, ok := s.entries[a.Key]
	if !ok {
		return nil, sdk.NotFound("memory entry %q", a.Key)
	}
	return e, nil
}

type getResult struct {
	Key         string          `json:"key"`
	Value       json.RawMessage `json:"value"`
	Description string          `json:"description,omitempty"`
	Importance  float64         `json:"importance"`
	WasEvicted  bool            `json:"was_evicted"`
}

// get returns an entry's value. It counts as a use: the entry becomes the
// most recently used and, if it was evicted, returns to the index.
func (s *memorySession) get(raw json.RawMessage) (json.RawMessage, error) {
	e, err := s.lookup(raw)
	if err != nil {
		return nil, err
	}
	res := getResult{Key: e.Key, Value: e.Value, Description: e.Description, Importance: e.Importance, WasEvicted: e.Evicted}
	s.touch(e)
	e.Evicted = false
	return sdk.EncodeResult(res)
}

func (s *memorySession) delete(raw json.RawMessage) (json.RawMessage, error) {
	e, err := s.lookup(raw)
	if err != nil {
		return nil, err
	}
	delete(s.entries, e.Key)
	return sdk.EncodeResult(map[string]string{"deleted": e.Key})
}

type listItem struct {
	Key         string  `json:"key"`
	Description string  `json:"description,omitempty"`
	Importance  float64 `json:"importance"`
	Bytes       int     `json:"bytes"` // size of the value's JSON text
	Evicted     bool    `json:"evicted"`
}

type listResult struct {
	Entries []listItem `json:"entries"`
	Evicted int        `json:"evicted"`
}

// list returns every entry, sorted by key, without values.
func (s *memorySession) list(raw json.RawMessage) (json.RawMessage, error) {
	if err := sdk.DecodeArgs(raw, &struct{}{}); err != nil {
		return nil, err
	}
	res := listResult{Entries: []listItem{}}
	for _, e := range s.sortedBy(all, byKey) {
		res.Entries = append(res.Entries, listItem{Key: e.Key, Description: e.Description, Importance: e.Importance, Bytes: len(e.Value), Evicted: e.Evicted})
		if e.Evicted {
			res.Evicted++
		}
	}
	return sdk.EncodeResult(res)
}
