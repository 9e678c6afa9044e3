package load_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// echo stands in for the OpenAI client: it "streams" one chunk per
// completion token, 1 ms apart, and fails every tenth request.
var echo = load.SenderFunc(func(ctx context.Context, req openai.Request, s *sample.Sample) {
	s.Sent = time.Now()
	defer func() { s.Done = time.Now() }()
	if s.Index%10 == 9 {
		s.Fail(sample.ErrHTTPStatus, 503, "engine overloaded")
		return
	}
	for range req.MaxTokens {
		select {
		case <-ctx.Done():
			s.Fail(sample.ErrCanceled, 0, ctx.Err().Error())
			return
		case <-time.After(time.Millisecond):
		}
		s.Chunks = append(s.Chunks, sample.Chunk{At: time.Since(s.Sent), Tokens: 1})
	}
	s.PromptTokens = len(strings.Fields(req.Prompt))
	s.CompletionTokens = req.MaxTokens
	s.FinishReason = "length"
})

// ExampleRun wires the stages: workload builds the prompts, load drives
// them through a Sender, stats summarizes (vllmfmt.WriteText would print
// the full block, whose timings vary from run to run).
func ExampleRun() {
	gen, err := workload.New(workload.Config{Model: "Qwen/Qwen3-0.6B", PromptTokens: 64, MaxTokens: 4, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := load.Run(context.Background(), load.Config{Concurrency: 4, Requests: 20, Warmup: 1}, echo, gen.Next)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := stats.Summarize(res.Samples, res.Start, res.End, stats.SLO{TTFT: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("samples:", len(res.Samples), "warm-up:", len(res.Samples)-len(res.Measured()))
	fmt.Println("completed:", sum.Completed, "failed:", sum.FailedByKind)
	fmt.Println("input tokens:", sum.TotalInputTokens, "output tokens:", sum.TotalOutputTokens)
	_, inconclusive := sum.Inconclusive()
	fmt.Println("inconclusive:", inconclusive)
	// Output:
	// samples: 21 warm-up: 1
	// completed: 18 failed: map[http_status:2]
	// input tokens: 1152 output tokens: 72
	// inconclusive: false
}
