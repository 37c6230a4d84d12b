package callpath

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/ctxhost/ctxhost/engine"
	"github.com/ctxhost/ctxhost/provider/openai"
	"github.com/ctxhost/ctxhost/provider/responses"
	"github.com/ctxhost/ctxhost/sdk"
)

// A Responses answer given with store on is recorded with the session:
// the assistant message it adds carries the response's id and the
// response object as it came in its metadata, saved with the session
// like every message. What the call path also remembers in memory
// (responsesState) is an index over them; after a restart, a call that
// names its session (SessionHeader) or whose conversation leads to it
// finds its earlier responses and their output items in the session.
const (
	metaResponseID = "openai.response_id"
	metaResponse   = "openai.response"
)

// withResponse is m carrying a's response id and object (unchanged when
// the answer has no id, or its object is not text a message can hold).
func withResponse(m sdk.Message, a *responses.Answer) sdk.Message {
	raw := a.Response()
	if a.ID() == "" || len(raw) == 0 || !utf8.Valid(raw) {
		return m
	}
	md := make(map[string]string, len(m.Metadata)+2)
	for k, v := range m.Metadata {
		md[k] = v
	}
	md[metaResponseID], md[metaResponse] = a.ID(), string(raw)
	m.Metadata = md
	return m
}

// storedResponse finds the response of id among the session's messages:
// the place of the message that recorded it and the response object.
func storedResponse(es *engine.Session, id string) (at int, msg sdk.Message, ok bool) {
	held := es.Messages()
	for i := len(held) - 1; i >= 0; i-- {
		if held[i].Metadata[metaResponseID] == id {
			return i, held[i], true
		}
	}
	return 0, sdk.Message{}, false
}

// storedItem finds the output item of id among the responses the
// session's messages recorded.
func storedItem(es *engine.Session, id string) (json.RawMessage, bool) {
	held := es.Messages()
	for i := len(held) - 1; i >= 0; i-- {
		raw := held[i].Metadata[metaResponse]
		if raw == "" {
			continue
		}
		var r struct {
			Output []json.RawMessage `json:"output"`
		}
		if json.Unmarshal([]byte(raw), &r) != nil {
			continue
		}
		for _, it := range r.Output {
			var head struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(it, &head) == nil && head.ID == id {
				return it, true
			}
		}
	}
	return nil, false
}

// sessionLookup resolves references from what session es recorded, after
// the memory of st.
func sessionLookup(st *responsesState, session string, es *engine.Session) lookup {
	return lookup{
		answer: func(id string) (recorded, bool) {
			if r, ok := st.answers.Get(id); ok {
				return r, true
			}
			at, m, ok := storedResponse(es, id)
			if _, gone := st.deleted.Get(id); !ok || gone {
				return recorded{}, false
			}
			return recorded{session: session, held: at + 1, last: m.ID, digest: es.HistoryDigest(at + 1)}, true
		},
		item: func(id string) (json.RawMessage, bool) {
			if it, ok := st.items.Get(id); ok {
				return it, true
			}
			return storedItem(es, id)
		},
	}
}

// responseNotFound is OpenAI's 404 for a response it does not hold.
func responseNotFound(w http.ResponseWriter, id string) {
	writeBody(w, http.StatusNotFound, openai.ProviderError("Response with id '"+id+"' not found.", "", ""))
}

// storedEndpoint answers GET and DELETE /v1/responses/{id} from what the
// session recorded: GET with the response object as the provider gave it,
// DELETE with OpenAI's deletion object, after which the call path no
// longer resolves the response (in this process). The session is the one
// the call names (SessionHeader), else the one that recorded the response
// in this process; a response ctxhost did not record is 404 in OpenAI's
// shape.
func (h *Handler) storedEndpoint(u *upstream) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.PathValue("id")
		endpoint := "responses.get"
		if r.Method == http.MethodDelete {
			endpoint = "responses.delete"
		}
		h.metrics.called(u.Name, endpoint)
		if !h.authorized(r) {
			writeBody(w, http.StatusUnauthorized, openai.Error(http.StatusUnauthorized, "missing or wrong "+TokenHeader))
			return
		}
		session := r.Header.Get(SessionHeader)
		if rec, ok := h.responses.answers.Get(id); ok && session == "" {
			session = rec.session
		}
		if _, gone := h.responses.deleted.Get(id); session == "" || gone {
			responseNotFound(w, id)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), u.Timeout)
		defer cancel()
		var body []byte
		err := h.sessions.WithSession(ctx, session, u.Profile, func(es *engine.Session) error {
			if _, m, ok := storedResponse(es, id); ok {
				body = []byte(m.Metadata[metaResponse])
			}
			return nil
		})
		switch {
		case err != nil:
			writeBody(w, http.StatusInternalServerError, openai.Error(http.StatusInternalServerError, "read the session: "+callerMessage(err)))
		case body == nil:
			responseNotFound(w, id)
		case r.Method == http.MethodDelete:
			h.responses.forget(id)
			b, _ := json.Marshal(map[string]any{"id": id, "object": "response", "deleted": true})
			writeBody(w, http.StatusOK, b)
		default:
			writeBody(w, http.StatusOK, body)
		}
		h.log.Info("call", "upstream", u.Name, "endpoint", endpoint, "session", session, "duration", time.Since(start).Round(time.Microsecond).String())
	})
}
