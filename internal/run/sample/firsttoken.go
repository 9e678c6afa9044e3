package sample

import (
	"context"
	"time"
)

type firstTokenKey struct{}

// WithFirstToken returns ctx carrying f, which the Sender of a request sent
// with ctx calls once, as soon as the request's first content-bearing chunk
// arrives, with the request's send time (Sample.Sent) and the chunk's
// arrival: the load generator's watches learn of first tokens while
// requests are still in flight. f must be quick and safe for concurrent
// use.
func WithFirstToken(ctx context.Context, f func(sent, at time.Time)) context.Context {
	return context.WithValue(ctx, firstTokenKey{}, f)
}

// FirstToken calls the function ctx carries (WithFirstToken), if any.
func FirstToken(ctx context.Context, sent, at time.Time) {
	if f, ok := ctx.Value(firstTokenKey{}).(func(sent, at time.Time)); ok {
		f(sent, at)
	}
}
