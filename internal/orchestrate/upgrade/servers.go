package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// Servers says how the two sides' servers live across the pairs.
type Servers string

// The server lifecycles.
const (
	// Restart (the default): one server at a time, started for each block
	// of one side's runs and stopped after it; two blocks of the same side
	// in a row (NEW at the end of one pair, NEW first in the next) share
	// one start, so n pairs take n+1 starts per profile. For one GPU that
	// cannot hold two vLLM servers; it also samples start-to-start
	// variation on both sides.
	Restart Servers = "restart"
	// Keep: each side's server is started once and both stay up while
	// their profile's points run (two starts per profile and round). For
	// the simulator, or two servers that fit on the runner's GPUs.
	Keep Servers = "keep"
)

// DefaultServers is the lifecycle when none is given.
const DefaultServers = Restart

// ParseServers reads "restart" or "keep" ("" is DefaultServers).
func ParseServers(s string) (Servers, error) {
	switch v := Servers(strings.ToLower(strings.TrimSpace(s))); v {
	case "":
		return DefaultServers, nil
	case Restart, Keep:
		return v, nil
	}
	return "", fmt.Errorf("%w: servers %q: want restart (one server at a time, the default) or keep (both up at once)", ErrSettings, s)
}

// capacity is how many servers the lifecycle keeps up at once.
func (s Servers) capacity() int {
	if s == Keep {
		return 2
	}
	return 1
}

// session is one side's running server for one profile.
type session interface {
	// run runs a point and checks it.
	run(ctx context.Context, p scenario.Point) (*suite.Run, error)
	// configLines are the benchfmt configuration lines of the server.
	configLines() [][2]string
	close(ctx context.Context) error
}

// starter starts a side's server for a profile.
type starter interface {
	start(ctx context.Context, side int, profile string) (session, error)
}

// suiteStarter starts servers through one suite per side.
type suiteStarter struct {
	suites [2]*suite.Suite
	// simulator marks the sides that run vllm-sim: each of their starts
	// gets its own --sim-seed (see seedArgs).
	simulator [2]bool
	starts    int
}

func (s *suiteStarter) start(ctx context.Context, side int, name string) (session, error) {
	p, err := profile.Resolve(name)
	if err != nil {
		return nil, err
	}
	s.starts++
	if s.simulator[side] {
		p = p.WithSimArgs(seedArgs(p, s.suites[side].Config().SimArgs, s.starts)...)
	}
	ss, err := s.suites[side].StartProfile(ctx, p)
	if err != nil {
		return nil, err
	}
	return suiteSession{ss: ss, apiKey: s.suites[side].Config().APIKey}, nil
}

// seedArgs gives the n-th simulator start its own noise: the simulator
// draws its timing jitter from --sim-seed, so every start with the same
// seed replays the same noise, and OLD and NEW would share it — a real GPU
// repeats nothing. It returns --sim-seed n, unless the profile or the
// arguments (VLLMPERF_SIM_ARGS, the side's) already set a seed, which then
// stands.
func seedArgs(p profile.Profile, args []string, n int) []string {
	for _, a := range append(p.SimArgs(), args...) {
		if cliarg.SimSeed.Is(a) {
			return nil
		}
	}
	return cliarg.SimSeed.With(strconv.Itoa(n))
}

type suiteSession struct {
	ss     *suite.Session
	apiKey string
}

func (s suiteSession) parityClient() (*openai.Client, string) {
	return openai.New(s.ss.Server.BaseURL(), openai.WithAPIKey(s.apiKey), openai.WithFamily(server.FamilyOf(s.ss.Server))), s.ss.Server.Model()
}

func (s suiteSession) run(ctx context.Context, p scenario.Point) (*suite.Run, error) {
	return s.ss.Run(ctx, p)
}
func (s suiteSession) configLines() [][2]string        { return s.ss.ConfigLines }
func (s suiteSession) close(ctx context.Context) error { return s.ss.Close(ctx) }

// StartError is a side's server that did not start: "NEW, profile basic:
// …". A caller that runs many gates (bisect) tells OLD's from NEW's.
type StartError struct {
	// Side is "OLD" or "NEW".
	Side, Profile string
	Err           error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("%s, profile %s: %v", e.Side, e.Profile, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// stopTimeout bounds a server's stop, also after the gate's context ended.
const stopTimeout = 2 * time.Minute

// pool holds the running servers: at most capacity, the least recently
// used stopped first when another must start.
type pool struct {
	starter  starter
	capacity int
	log      io.Writer
	open     []openServer // least recently used first
	starts   int
}

type openServer struct {
	side    int
	profile string
	s       session
}

// get returns the side's server for profile, starting it (and stopping
// the least recently used one when the pool is full) when it is not up.
func (p *pool) get(ctx context.Context, side int, profile string) (session, error) {
	for i, o := range p.open {
		if o.side == side && o.profile == profile {
			p.open = append(append(p.open[:i:i], p.open[i+1:]...), o)
			return o.s, nil
		}
	}
	for len(p.open) >= p.capacity {
		if err := p.stop(ctx, 0); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(p.log, "upgrade-gate: starting %s's server (profile %s)\n", strings.ToUpper(sideNames[side]), profile)
	s, err := p.starter.start(ctx, side, profile)
	if err != nil {
		return nil, &StartError{Side: strings.ToUpper(sideNames[side]), Profile: profile, Err: err}
	}
	p.starts++
	p.open = append(p.open, openServer{side: side, profile: profile, s: s})
	return s, nil
}

func (p *pool) stop(ctx context.Context, i int) error {
	o := p.open[i]
	p.open = append(p.open[:i:i], p.open[i+1:]...)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := o.s.close(sctx); err != nil {
		return fmt.Errorf("stop %s's server (profile %s): %w", strings.ToUpper(sideNames[o.side]), o.profile, err)
	}
	return nil
}

// closeAll stops every running server.
func (p *pool) closeAll(ctx context.Context) error {
	var errs []error
	for len(p.open) > 0 {
		errs = append(errs, p.stop(ctx, 0))
	}
	return errors.Join(errs...)
}
