package server

import (
	"context"
	"time"
)

// StopTimeout bounds Stop.
const StopTimeout = time.Minute

// Stop closes srv (a container is removed) even when ctx was canceled, as
// after an interrupted run, waiting at most StopTimeout.
func Stop(ctx context.Context, srv Server) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StopTimeout)
	defer cancel()
	return srv.Close(ctx)
}
