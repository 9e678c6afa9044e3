package workload

import (
	"errors"
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/request/openai"
)

// datasetGen builds the requests of a class that sends a data set's
// entries: request j is entry j mod len, its first message preceded by
// the run's nonce and the pass over the set (j / len), UniqueWords words,
// so runs never share a prefix by accident and a second pass over the set
// is not served from the prefix cache of the first. A shared system prompt
// of the set stays shared within a pass.
type datasetGen struct {
	gen   *Generator
	set   *dataset.Set
	limit int // caps each entry's output length (0: none)
}

func newDatasetGen(g *Generator, s *dataset.Set, limit int) (*datasetGen, error) {
	if len(s.Entries) == 0 {
		return nil, errors.New("the data set has no entries")
	}
	return &datasetGen{gen: g, set: s, limit: limit}, nil
}

// next builds the class's j-th request.
func (d *datasetGen) next(j int) openai.Request {
	n := len(d.set.Entries)
	e := d.set.Entries[j%n]
	var tag strings.Builder
	d.gen.appendBytes(&tag, d.gen.nonce, NonceWords)
	d.gen.appendBytes(&tag, uint64(j/n), IndexWords)
	req := d.gen.request(e.Prompt)
	req.System = e.System
	req.History = append([]openai.Turn(nil), e.History...)
	switch {
	case req.System != "":
		req.System = tag.String() + " " + req.System
	case len(req.History) > 0:
		req.History[0].User = tag.String() + " " + req.History[0].User
	default:
		req.Prompt = tag.String() + " " + req.Prompt
	}
	req.MaxTokens = e.OutputLen
	if d.limit > 0 && d.limit < req.MaxTokens {
		req.MaxTokens = d.limit
	}
	return req
}

// longest is the set's request that needs the most context.
func (d *datasetGen) longest() openai.Request {
	best, bestTokens := openai.Request{}, -1
	for j := range d.set.Entries {
		req := d.next(j)
		if t := requestWords(req) + req.MaxTokens; t > bestTokens {
			best, bestTokens = req, t
		}
	}
	return best
}
