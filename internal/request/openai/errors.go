package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// maxMessage bounds an error message kept in a sample.
const maxMessage = 400

// fail classifies err into s.Err. parent is the caller's context, rctx the
// request's own (with the timeouts); reached reports whether the POST left.
func (c *Client) fail(s *sample.Sample, parent, rctx context.Context, err error, reached bool) {
	kind, status, msg := c.classify(parent, rctx, err, reached)
	s.Fail(kind, status, c.redact(msg))
}

func (c *Client) classify(parent, rctx context.Context, err error, reached bool) (sample.ErrorKind, int, string) {
	// Context first: a canceled or timed-out request surfaces as whatever the
	// transport was doing at that moment.
	if perr := parent.Err(); perr != nil {
		if errors.Is(perr, context.DeadlineExceeded) {
			return sample.ErrTimeout, 0, "caller's deadline exceeded: " + err.Error()
		}
		return sample.ErrCanceled, 0, "canceled: " + err.Error()
	}
	if rctx.Err() != nil {
		switch cause := context.Cause(rctx); {
		case errors.Is(cause, errIdleTimeout):
			return sample.ErrTimeout, 0, fmt.Sprintf("no stream event for %v (idle timeout)", c.idleTimeout)
		case errors.Is(cause, errRequestTimeout):
			return sample.ErrTimeout, 0, fmt.Sprintf("request ran past %v (request timeout)", c.requestTimeout)
		}
	}

	var apiErr *goopenai.APIError
	var reqErr *goopenai.RequestError
	var protoErr *protocolError
	var stErr *statusError
	var netErr net.Error
	switch {
	case errors.As(err, &protoErr):
		return sample.ErrProtocol, 0, protoErr.msg
	case errors.As(err, &stErr):
		return sample.ErrHTTPStatus, stErr.status, stErr.msg
	case errors.As(err, &reqErr):
		// Before APIError: go-openai wraps an empty APIError in the
		// RequestError of an error body it could not parse, such as vLLM's
		// 401 {"error": "Unauthorized"}.
		body := clip(strings.TrimSpace(redactKey(string(reqErr.Body), c.apiKey)), maxErrorBody)
		return statusKind(reqErr.HTTPStatusCode), reqErr.HTTPStatusCode, fmt.Sprintf("%s, body %q", reqErr.HTTPStatus, body)
	case errors.As(err, &apiErr):
		if apiErr.HTTPStatusCode != 0 {
			return statusKind(apiErr.HTTPStatusCode), apiErr.HTTPStatusCode, describeAPIError(apiErr)
		}
		return sample.ErrAPIEvent, 0, "error event in stream: " + describeAPIError(apiErr)
	case errors.Is(err, goopenai.ErrTooManyEmptyStreamMessages):
		return sample.ErrProtocol, 0, "too many non-data lines in the stream (not SSE?)"
	case errors.Is(err, goopenai.ErrChatCompletionInvalidModel),
		errors.Is(err, goopenai.ErrCompletionUnsupportedModel),
		errors.Is(err, goopenai.ErrCompletionRequestPromptTypeNotSupported),
		!reached && !isTransportError(err):
		return sample.ErrProtocol, 0, "invalid request (go-openai refused it): " + err.Error()
	case isDialError(err):
		return sample.ErrConnection, 0, err.Error()
	case errors.Is(err, io.ErrUnexpectedEOF):
		return sample.ErrConnection, 0, "connection closed mid-stream: " + err.Error()
	case errors.As(err, &netErr) && netErr.Timeout():
		return sample.ErrTimeout, 0, err.Error()
	case isTransportError(err):
		return sample.ErrConnection, 0, err.Error()
	default:
		return sample.ErrProtocol, 0, err.Error()
	}
}

// statusKind maps an HTTP failure status to its kind.
func statusKind(status int) sample.ErrorKind {
	switch {
	case status == http.StatusTooManyRequests:
		return sample.ErrRateLimited
	case rejectsKey(status):
		return sample.ErrAuth
	}
	return sample.ErrHTTPStatus
}

// rejectsKey reports whether an HTTP status refuses the request's
// credentials: 401, or 403 (which some gateways send for a wrong key).
func rejectsKey(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// describeAPIError renders an API error without go-openai's "error," noise.
func describeAPIError(e *goopenai.APIError) string {
	var b strings.Builder
	if e.Type != "" {
		b.WriteString(e.Type)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Code != nil {
		fmt.Fprintf(&b, " (code %v)", e.Code)
	}
	return b.String()
}

// isDialError reports whether err is a failure to connect (refused,
// unreachable, dial timeout).
func isDialError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// isTransportError reports whether err comes from dialing, reading or
// writing the connection.
func isTransportError(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// redact removes the API key from msg and bounds its length.
func (c *Client) redact(msg string) string {
	return clip(redactKey(msg, c.apiKey), maxMessage)
}
