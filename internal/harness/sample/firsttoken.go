package sample

import (
	"context"
	"time"
)

type firstTokenKey struct{}

// WithFirstToken returns ctx carrying f, which the Sender of a request sent
// with ctx calls once, as soon as the request's first content-bearing chunk
// arrives, with its TTFT: the load generator's overload watch learns of
// first tokens while requests are still in flight. f must be quick and safe
// for concurrent use.
func WithFirstToken(ctx context.Context, f func(ttft time.Duration)) context.Context {
	return context.WithValue(ctx, firstTokenKey{}, f)
}

// FirstToken calls the function ctx carries (WithFirstToken), if any.
func FirstToken(ctx context.Context, ttft time.Duration) {
	if f, ok := ctx.Value(firstTokenKey{}).(func(time.Duration)); ok {
		f(ttft)
	}
}
