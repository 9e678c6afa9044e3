package config

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// DefaultImageLimit is vLLM V1's default --limit-mm-per-prompt per modality.
const DefaultImageLimit = 999

// mmFlags are the multimodal flags of the flag table.
var mmFlags = []flagSpec{
	{name: "limit-mm-per-prompt", meta: "JSON", help: fmt.Sprintf(`most images one request may carry, as '{"image": N}' (or image=N; default %d)`, DefaultImageLimit),
		set: func(o *Options, v string) error {
			n, err := parseImageLimit(v)
			o.ImageLimit = &n
			return err
		}},
}

// parseImageLimit reads --limit-mm-per-prompt: JSON {"image": N, ...} or
// the older image=N[,video=M]; other modalities are accepted and ignored
// (the simulator takes images only).
func parseImageLimit(v string) (int, error) {
	bad := fmt.Errorf(`invalid value '%s' (want '{"image": N}' with N >= 0)`, v)
	limits := map[string]int{}
	if strings.HasPrefix(strings.TrimSpace(v), "{") {
		if err := json.Unmarshal([]byte(v), &limits); err != nil {
			return 0, bad
		}
	} else {
		for _, kv := range strings.Split(v, ",") {
			k, n, ok := strings.Cut(kv, "=")
			c, err := strconv.Atoi(strings.TrimSpace(n))
			if !ok || err != nil {
				return 0, bad
			}
			limits[strings.TrimSpace(k)] = c
		}
	}
	n, ok := limits["image"]
	switch {
	case !ok:
		return DefaultImageLimit, nil
	case n < 0:
		return 0, bad
	}
	return n, nil
}

// EffectiveImageLimit is the effective --limit-mm-per-prompt for images.
func (o Options) EffectiveImageLimit() int {
	if o.ImageLimit == nil {
		return DefaultImageLimit
	}
	return *o.ImageLimit
}
