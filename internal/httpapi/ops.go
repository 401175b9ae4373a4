package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

func (s *server) healthz(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only when the database answers and every migration is applied.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.DB.Ready(ctx); err != nil {
		s.logger.Warn("not ready", "request_id", infoOf(r).id, "error", err.Error())
		return apierr.New(apierr.ServiceUnavailable, "The service is not ready: its database is unreachable or not migrated.")
	}
	return writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (s *server) metricsHandler(w http.ResponseWriter, r *http.Request) error {
	s.metrics.handler.ServeHTTP(w, r)
	return nil
}

func (s *server) openapi(w http.ResponseWriter, r *http.Request) error {
	doc, err := s.OpenAPI()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(doc)
	return nil
}
