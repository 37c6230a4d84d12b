package client

import "testing"

func TestPayloadCacheKeepsTheMostRecent(t *testing.T) {
	c := newPayloadCache(2)
	put := func(session, agent, tag string) {
		c.put(&heldPayload{key: payloadKey{session, agent}, tag: tag, payload: "p-" + tag})
	}
	put("a", "", "1")
	put("b", "", "2")
	if c.get(payloadKey{"a", ""}) == nil { // a is now the most recent
		t.Fatal("a dropped too early")
	}
	put("c", "", "3") // drops b, the least recently used
	if c.get(payloadKey{"b", ""}) != nil || c.get(payloadKey{"a", ""}) == nil || c.get(payloadKey{"c", ""}) == nil {
		t.Fatal("wrong payload dropped")
	}
	put("a", "", "4") // replaces a's payload
	if h := c.get(payloadKey{"a", ""}); h == nil || h.tag != "4" || h.payload != "p-4" {
		t.Fatalf("replaced payload: %+v", h)
	}
	put("a", "planner", "5")
	c.forget("a")
	if c.get(payloadKey{"a", ""}) != nil || c.get(payloadKey{"a", "planner"}) != nil || c.held.Len() != 0 {
		t.Fatal("forget left a payload of a")
	}
	c.put(&heldPayload{key: payloadKey{"d", ""}}) // no tag: nothing to name later
	if c.get(payloadKey{"d", ""}) != nil {
		t.Fatal("a payload without a tag was held")
	}
	var off *payloadCache
	off.put(&heldPayload{tag: "x"})
	if off.get(payloadKey{}) != nil {
		t.Fatal("a nil cache held a payload")
	}
	off.forget("a")
}
