package server

import (
	"context"
	"net/http"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// detectFamily reads the family of a deployment whose family was not
// given (WithFamily, VLLMPERF_FAMILY, --family) off its /metrics at url:
// an exposition whose names carry "sglang:" is SGLang's
// (serverfamily.DetectText, over the first MiB). nil, the default family,
// when /metrics cannot be read or names no registered family.
func detectFamily(ctx context.Context, s settings, client *http.Client, url string) *serverfamily.Family {
	body, err := get(ctx, client, url, "")
	if err != nil {
		return nil
	}
	fam, ok := serverfamily.DetectText(body)
	if !ok || fam == serverfamily.Default {
		return nil
	}
	s.logf("vllm external: %s names %s series: measuring it as %s (set %s to say so)", url, fam.Metrics.Prefix, fam.Name, envFamily)
	return fam
}
