package gatemath

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

// TestMannWhitneyIsMoremaths: the memoized test gives go-moremath's p and U
// exactly, tested twice (the second from the memo), on samples with and
// without ties (few and many: tiedP's counts), of equal and unequal sizes,
// within and past the exact test's limits and tiesExactTotal, and its
// errors.
func TestMannWhitneyIsMoremaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, grid float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
			if grid > 0 {
				x[i] = float64(int(x[i]*grid)) / grid
			}
		}
		return x
	}
	alts := []stats.LocationHypothesis{stats.LocationLess, stats.LocationDiffers, stats.LocationGreater}
	for i := range 3000 {
		n1, n2 := 1+rng.IntN(12), 1+rng.IntN(12)
		if i%5 == 4 { // past the exact limits: the normal approximation
			n1, n2 = 20+rng.IntN(40), 20+rng.IntN(40)
		}
		grid := []float64{0, 0, 2, 1, 0.5, 8}[i%6] // two thirds with ties, from many groups to few
		x1, x2 := draw(n1, grid), draw(n2, grid)
		for _, alt := range alts {
			want, wantErr := stats.MannWhitneyUTest(x1, x2, alt)
			for range 2 {
				p, u, err := MannWhitney(x1, x2, alt)
				if (err != nil) != (wantErr != nil) {
					t.Fatalf("%v %v %v: error %v, want %v", x1, x2, alt, err, wantErr)
				}
				if err == nil && (p != want.P || u != want.U) {
					t.Fatalf("%v %v %v: p %v U %v, want p %v U %v", x1, x2, alt, p, u, want.P, want.U)
				}
			}
		}
	}
	if _, _, err := MannWhitney(nil, []float64{1}, stats.LocationLess); err == nil {
		t.Error("an empty sample gave no error")
	}
	if _, _, err := MannWhitney([]float64{1, 1}, []float64{1}, stats.LocationLess); err == nil {
		t.Error("samples all equal gave no error")
	}
}

// BenchmarkMannWhitney compares go-moremath's test with the memoized one
// on a gate row's samples (10 runs a side, no ties):
//
//	go test -run '^$' -bench MannWhitney ./internal/gate/
func BenchmarkMannWhitney(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	pairs := samplePairs(64, rng.NormFloat64)
	benchPairs(b, "moremath", pairs, moremathP)
	benchPairs(b, "memoized", pairs, func(x1, x2 []float64) error {
		_, _, err := MannWhitney(x1, x2, stats.LocationLess)
		return err
	})
}

// BenchmarkMannWhitneyTies compares go-moremath's exact test with ties
// with tiedP on samples as the quality measurements draw them: 10 runs a
// side, each drawn with replacement from 10 recorded values (so most
// tests have a tie vector of their own, and the memo rarely answers):
//
//	go test -run '^$' -bench MannWhitneyTies ./internal/gate/
func BenchmarkMannWhitneyTies(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	recorded := samplePairs(1, rng.NormFloat64)[0][0]
	pairs := samplePairs(256, func() float64 { return recorded[rng.IntN(len(recorded))] })
	benchPairs(b, "moremath", pairs, moremathP)
	benchPairs(b, "counted", pairs, func(x1, x2 []float64) error {
		u, groups, _ := uStatistic(x1, x2)
		if _, ok := tiedP(len(x1), len(x2), groups, u, stats.LocationLess); !ok {
			return errors.New("below the distribution's least U")
		}
		return nil
	})
}

// samplePairs is n pairs of samples of 10 values from draw, the second
// of each pair 0.3 higher.
func samplePairs(n int, draw func() float64) [][2][]float64 {
	pairs := make([][2][]float64, n)
	for i := range pairs {
		for s := range 2 {
			pairs[i][s] = make([]float64, 10)
			for j := range pairs[i][s] {
				pairs[i][s][j] = draw() + 0.3*float64(s)
			}
		}
	}
	return pairs
}

// moremathP is go-moremath's one-sided test.
func moremathP(x1, x2 []float64) error {
	_, err := stats.MannWhitneyUTest(x1, x2, stats.LocationLess)
	return err
}

// benchPairs times test over pairs, one pair an operation.
func benchPairs(b *testing.B, name string, pairs [][2][]float64, test func(x1, x2 []float64) error) {
	b.Run(name, func(b *testing.B) {
		for i := range b.N {
			pr := pairs[i%len(pairs)]
			if err := test(pr[0], pr[1]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
