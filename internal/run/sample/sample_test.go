package sample

import "testing"

func TestErrorStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                       string
		err                        *Error
		wantOK, wantFailed, wantIn bool
		wantDetail                 string
	}{
		// A success.
		{"success", nil, true, false, false, ""},
		// A status failure: Detail carries the status.
		{"http 400", &Error{Kind: ErrHTTPStatus, Status: 400, Message: "too long"}, false, true, false, "HTTP 400: too long"},
		// A refused key is a failure of its own kind.
		{"auth", &Error{Kind: ErrAuth, Status: 401, Message: "Unauthorized"}, false, true, false, "HTTP 401: Unauthorized"},
		// An interruption is neither a success nor a failure.
		{"canceled", &Error{Kind: ErrCanceled, Message: "canceled"}, false, false, true, "canceled"},
		// A grace cut is a failure.
		{"grace expired", &Error{Kind: ErrGraceExpired, Message: "still in flight"}, false, true, false, "still in flight"},
	}
	for _, tt := range tests {
		s := Sample{Err: tt.err}
		if s.OK() != tt.wantOK || s.Failed() != tt.wantFailed || s.Interrupted() != tt.wantIn {
			t.Errorf("%s: OK %v Failed %v Interrupted %v, want %v %v %v", tt.name, s.OK(), s.Failed(), s.Interrupted(), tt.wantOK, tt.wantFailed, tt.wantIn)
		}
		if tt.err != nil && tt.err.Detail() != tt.wantDetail {
			t.Errorf("%s: Detail() = %q, want %q", tt.name, tt.err.Detail(), tt.wantDetail)
		}
	}
}
