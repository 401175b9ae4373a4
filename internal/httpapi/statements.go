package httpapi

import (
	"mime"
	"net/http"
	"time"

	"github.com/strongroom/strongroom/internal/statement"
)

// statementWriteTimeout bounds writing one statement, in place of the
// server's write timeout: a year of a busy account takes longer to send
// to a slow client than an ordinary answer.
const statementWriteTimeout = 10 * time.Minute

// statement streams the organization's statement in the format the query
// names (docs/api.md, Statements). Everything that can be refused is
// refused before the first byte; a failure while rows are being written
// aborts the response, so a client never takes a truncated statement for a
// whole one.
func (s *server) statement(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	q, err := statement.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	st, err := s.Statements.Open(r.Context(), actorOf(r), org, q)
	if err != nil {
		return err
	}
	defer st.Close()
	h := w.Header()
	h.Set("Content-Type", st.ContentType())
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": st.Filename()}))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(statementWriteTimeout))
	w.WriteHeader(http.StatusOK)
	if _, err := st.WriteTo(r.Context(), w); err != nil {
		if r.Context().Err() == nil {
			s.logger.ErrorContext(r.Context(), "statement aborted", "request_id", infoOf(r).id, "error", err.Error())
		}
		panic(http.ErrAbortHandler)
	}
	return nil
}
