package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseSLO reads vLLM's --goodput: items such as "ttft:200", "tpot:50",
// "e2el:2000" (milliseconds), several per item when space-separated.
func ParseSLO(items []string) (SLO, error) {
	var slo SLO
	for _, item := range items {
		for _, kv := range strings.Fields(item) {
			name, val, ok := strings.Cut(kv, ":")
			ms, err := strconv.ParseFloat(val, 64)
			if !ok || err != nil || ms <= 0 || math.IsInf(ms, 0) {
				return slo, fmt.Errorf("%q: want NAME:MILLISECONDS with NAME one of ttft, tpot, e2el, e.g. ttft:200", kv)
			}
			d := time.Duration(ms * float64(time.Millisecond))
			switch strings.ToLower(name) {
			case "ttft":
				slo.TTFT = d
			case "tpot":
				slo.TPOT = d
			case "e2el":
				slo.E2EL = d
			default:
				return slo, fmt.Errorf("%q: unknown metric %q; use ttft, tpot or e2el", kv, name)
			}
		}
	}
	return slo, nil
}
