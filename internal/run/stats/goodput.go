package stats

import (
	"math"
	"strconv"
)

// Goodput is the share of requests that met the SLO over some runs, with
// its 95% interval (Wilson's score interval, which stays inside 0–100% and
// is honest at 100% of few requests: 100 of 100 is 96.3–100%).
type Goodput struct {
	Good, Requests int
	// Pct, Low and High are in percent.
	Pct, Low, High float64
}

// wilsonZ is the normal quantile of a two-sided 95% interval.
const wilsonZ = 1.959963984540054

// GoodputOf is good of requests with its interval (0 requests: 0–100%).
func GoodputOf(good, requests int) Goodput {
	g := Goodput{Good: good, Requests: requests, High: 100}
	if requests == 0 {
		return g
	}
	n, p, z2 := float64(requests), float64(good)/float64(requests), wilsonZ*wilsonZ
	center := (p + z2/(2*n)) / (1 + z2/n)
	half := wilsonZ / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	g.Pct, g.Low, g.High = 100*p, 100*max(0, center-half), 100*min(1, center+half)
	return g
}

// Range writes the interval: "96.3–100%".
func (g Goodput) Range() string {
	return strconv.FormatFloat(g.Low, 'f', 1, 64) + "–" + strconv.FormatFloat(g.High, 'f', 1, 64) + "%"
}
