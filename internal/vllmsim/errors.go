package vllmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// apiError is vLLM's error body: {"error":{"message","type","param","code"}}.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    int     `json:"code"`
}

func newAPIError(status int, typ, param, msg string) *apiError {
	e := &apiError{Message: msg, Type: typ, Code: status}
	if param != "" {
		e.Param = &param
	}
	return e
}

// badRequest is a 400 BadRequestError about param ("" for none).
func badRequest(param, format string, a ...any) *apiError {
	return newAPIError(http.StatusBadRequest, "BadRequestError", param, fmt.Sprintf(format, a...))
}

// write answers with the error as the whole body.
func (e *apiError) write(w http.ResponseWriter) {
	writeJSON(w, e.Code, map[string]*apiError{"error": e})
}

func writeError(w http.ResponseWriter, status int, typ, param, msg string) {
	newAPIError(status, typ, param, msg).write(w)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// engineDeadMessage is vLLM's text for a request to a dead engine.
const engineDeadMessage = "EngineCore encountered an issue. See stack trace (above) for the root cause."

// engineError maps an engine error to vLLM's error answer.
func engineError(err error) *apiError {
	var re *engine.RequestError
	switch {
	case errors.As(err, &re):
		status := re.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		typ := "BadRequestError"
		if status >= http.StatusInternalServerError {
			typ = "InternalServerError"
		}
		return newAPIError(status, typ, "", re.Message)
	case errors.Is(err, engine.ErrEngineDead):
		return newAPIError(http.StatusInternalServerError, "InternalServerError", "", engineDeadMessage)
	case errors.Is(err, engine.ErrEngineClosed):
		return newAPIError(http.StatusServiceUnavailable, "ServiceUnavailableError", "", "The server is shutting down; retry on another replica or after it restarts.")
	}
	return newAPIError(http.StatusInternalServerError, "InternalServerError", "", err.Error())
}
