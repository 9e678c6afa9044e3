package gpuset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/results/merge"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// Job is one profile to run and how many GPUs its server uses.
type Job struct {
	Profile string
	Width   int
}

// Options configure Run.
type Options struct {
	// Sets are the GPU sets; Jobs the profiles, in the suite's order.
	Sets []Set
	Jobs []Job
	// Out is the merged results folder (new); Parts the folder that
	// receives each process's results folder and output log.
	Out, Parts string
	// TestArgs are go test's arguments after "test" (-run, -bench,
	// -count, ..., the package); Go the go command and Dir the module
	// root it runs in; Env the processes' environment, to which each
	// gets its VLLMPERF_PROFILES, VLLMPERF_GPUS and VLLMPERF_RESULTS.
	TestArgs []string
	Go, Dir  string
	Env      []string
	// Binary, when set, is a test binary built beforehand (go test -c)
	// that runs instead of go test, with TestArgs (then -test.* flags).
	Binary string
	// Stdout receives every process's output, each line prefixed with
	// its profile and set.
	Stdout io.Writer
}

// Part is one profile's process.
type Part struct {
	Job
	Set Set
	// Dir is its results folder, Log its output.
	Dir, Log string
	// Code is go test's exit status: 0, or 1 when a benchmark failed.
	Code          int
	Start, End    time.Time
	ProcessFailed error
}

// Result is what Run did: the processes in the jobs' order and the
// merged folder.
type Result struct {
	Parts  []*Part
	Merged *merge.Result
}

// Code is the worst of the processes' exit statuses (1 when a benchmark
// failed: still merged, gated and reported).
func (r *Result) Code() int {
	code := 0
	for _, p := range r.Parts {
		code = max(code, p.Code)
	}
	return code
}

// Check refuses jobs no set is wide enough for, and fewer than two sets.
func Check(sets []Set, jobs []Job) error {
	if len(sets) < 2 {
		return fmt.Errorf("%s: %d GPU set(s): spreading profiles needs two or more (without it they run one after another)", EnvGPUSets, len(sets))
	}
	widest := 0
	for _, s := range sets {
		widest = max(widest, len(s))
	}
	for _, j := range jobs {
		if j.Width > widest {
			return fmt.Errorf("%s: profile %s needs %d GPUs (its tensor × pipeline × data parallel size), and the widest set has %d: give wider sets (such as 0,1;2,3)", EnvGPUSets, j.Profile, j.Width, widest)
		}
	}
	return nil
}

// Run runs every job in a go test process of its own on a free set wide
// enough for it, at most one process per set at a time, then merges the
// processes' results folders in the jobs' order into o.Out. A process that
// fails to run (not a failed benchmark: exit 1 is merged) is an error,
// and nothing is merged.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := Check(o.Sets, o.Jobs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Parts, 0o755); err != nil {
		return nil, fmt.Errorf("spread: %w", err)
	}
	res := &Result{}
	for i, j := range o.Jobs {
		name := fmt.Sprintf("%02d-%s", i+1, safeName(j.Profile))
		res.Parts = append(res.Parts, &Part{Job: j, Dir: filepath.Join(o.Parts, name), Log: filepath.Join(o.Parts, name+".log")})
	}
	q := &queue{pending: res.Parts}
	out := &lineWriter{w: o.Stdout}
	var wg sync.WaitGroup
	for _, set := range o.Sets {
		wg.Go(func() {
			for p := q.next(len(set)); p != nil; p = q.next(len(set)) {
				p.Set = set
				p.ProcessFailed = o.runPart(ctx, p, out)
			}
		})
	}
	wg.Wait()
	var errs []error
	for _, p := range res.Parts {
		if p.ProcessFailed != nil {
			errs = append(errs, fmt.Errorf("profile %s on GPUs %s: %w (its output: %s)", p.Profile, p.Set, p.ProcessFailed, p.Log))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("spread: %w", err)
	}
	dirs := make([]string, len(res.Parts))
	for i, p := range res.Parts {
		dirs[i] = p.Dir
	}
	m, err := merge.Folders(o.Out, dirs)
	if err != nil {
		return res, fmt.Errorf("spread: %w", err)
	}
	res.Merged = m
	return res, nil
}

// runPart runs one profile's go test process on its set.
func (o Options) runPart(ctx context.Context, p *Part, out *lineWriter) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return err
	}
	log, err := os.Create(p.Log)
	if err != nil {
		return err
	}
	defer log.Close()
	prefix := fmt.Sprintf("[%s on GPUs %s] ", p.Profile, p.Set)
	pw := out.prefixed(prefix)
	defer pw.Flush()
	fmt.Fprintf(pw, "%s\n", strings.Join(append([]string{cmdName(o)}, o.TestArgs...), " "))
	cmd := exec.CommandContext(ctx, o.Go, append([]string{"test"}, o.TestArgs...)...)
	if o.Binary != "" {
		cmd = exec.CommandContext(ctx, o.Binary, o.TestArgs...)
	}
	cmd.Dir = o.Dir
	cmd.Env = append(withoutSets(o.Env), envvar.Profiles.Name+"="+p.Profile, envGPUs+"="+p.Set.String(), envvar.Results.Name+"="+abs)
	w := io.MultiWriter(log, pw)
	cmd.Stdout, cmd.Stderr = w, w
	exitstatus.StopChildren(cmd) // a stop reaches the test binary, which removes its containers
	p.Start = time.Now()
	err = cmd.Run()
	p.End = time.Now()
	exitstatus.KillGroup(cmd)
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("stopped: %w", context.Cause(ctx))
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		p.Code = 1 // a benchmark failed: still merged and gated
		return nil
	}
	return fmt.Errorf("go test: %w", err)
}

// cmdName names what runs a part, for its first line.
func cmdName(o Options) string {
	if o.Binary != "" {
		return o.Binary
	}
	return o.Go + " test"
}

// withoutSets is env less EnvGPUSets, VLLMPERF_PROFILES, VLLMPERF_GPUS
// and VLLMPERF_RESULTS (each process gets its own).
func withoutSets(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case EnvGPUSets, "VLLMPERF_PROFILES", envGPUs, "VLLMPERF_RESULTS":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// queue hands out the jobs in order: the first pending one that fits.
type queue struct {
	mu      sync.Mutex
	pending []*Part
}

// next takes the first pending part whose server fits in width GPUs;
// nil when none is left that fits.
func (q *queue) next(width int) *Part {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, p := range q.pending {
		if p.Width <= width {
			q.pending = append(q.pending[:i:i], q.pending[i+1:]...)
			return p
		}
	}
	return nil
}

// safeName keeps a profile name usable as a folder name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}

// lineWriter writes whole lines of several processes to one writer, each
// line with its process's prefix.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// prefixed returns a writer that prefixes each of its lines; Flush
// writes a last line without its newline.
func (l *lineWriter) prefixed(prefix string) *prefixWriter {
	return &prefixWriter{l: l, prefix: prefix}
}

// prefixWriter is one process's view of a lineWriter.
type prefixWriter struct {
	l      *lineWriter
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.line(p.buf[:i])
		p.buf = p.buf[i+1:]
	}
}

// Flush writes what is left of a line.
func (p *prefixWriter) Flush() {
	if len(p.buf) > 0 {
		p.line(p.buf)
		p.buf = nil
	}
}

func (p *prefixWriter) line(b []byte) {
	if p.l.w == nil {
		return
	}
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	fmt.Fprintf(p.l.w, "%s%s\n", p.prefix, b)
}
