// Package gatemath is the gate's statistics, as x/perf's benchmath is
// benchstat's: one side's median and interval (Summarize, as benchstat),
// the exact Mann-Whitney U test (MannWhitney, UTest, UTestWorse), Holm's
// correction and the Cauchy combination of p-values, the α weights of a
// profile's tests, mid-ranks, the start-aware test's standard deviation
// and p (StartSD, StartP), the point contrasts, the spreads behind the
// minimum detectable effects, and the runs-a-side estimates.
//
// It is pure: numbers in, numbers out. It must not read files, format
// words or reports, or import package gate, input or render; only the
// vocabulary of units (internal/vocab/units) and go-moremath/x/perf's
// statistics.
package gatemath
