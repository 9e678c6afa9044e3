package lease

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// leaseKeyTimeout bounds the look-ups a lease key needs (a host name's
// addresses, nvidia-smi's GPU list).
const leaseKeyTimeout = 5 * time.Second

// TargetKey is the canonical form of a deployment's base URL for its
// lease: scheme, resolved address and port, so that every spelling of
// one server is one lock (http://localhost:8000, http://127.0.0.1:8000/,
// http://LOCALHOST:8000/v1). A name resolves to its addresses and the
// first IPv4 one (else the first) stands for it; a name that does not
// resolve is kept, lower-cased. The path is left out: a gateway's paths
// may lead to one deployment, and two loads on it must not run together.
func TargetKey(ctx context.Context, base string, resolve func(context.Context, string) ([]string, error)) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	} else if addrs, err := resolve(ctx, host); err == nil && len(addrs) > 0 {
		host = pickAddress(addrs)
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// pickAddress is the address that stands for a name: the lowest IPv4
// one, else the lowest, so that every look-up picks the same.
func pickAddress(addrs []string) string {
	var v4, v6 []string
	for _, a := range addrs {
		ip := net.ParseIP(a)
		switch {
		case ip == nil:
		case ip.To4() != nil:
			v4 = append(v4, ip.String())
		default:
			v6 = append(v6, ip.String())
		}
	}
	slices.Sort(v4)
	slices.Sort(v6)
	if len(v4) > 0 {
		return v4[0]
	}
	if len(v6) > 0 {
		return v6[0]
	}
	return addrs[0]
}

// lookupHost resolves a name with the system's resolver.
func lookupHost(ctx context.Context, host string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, leaseKeyTimeout)
	defer cancel()
	return net.DefaultResolver.LookupHost(ctx, host)
}

// TargetLocks is the lock an external deployment's load holds: one per
// canonical target (TargetKey; a hash of it names the file).
func TargetLocks(ctx context.Context, base string) []Spec {
	key := TargetKey(ctx, base, lookupHost)
	sum := sha256.Sum256([]byte(key))
	what := "the deployment at " + base
	if key != base {
		what += " (" + key + ")"
	}
	return []Spec{{name: "target-" + hex.EncodeToString(sum[:8]) + ".lock", mode: Exclusive, what: what}}
}

// Indexes maps every GPU UUID nvidia-smi lists to its index, so that
// a container given GPU 0 and one given its UUID take one lock.
type Indexes map[string]string

// errNoNvidiaSMI says the GPU ids could not be mapped.
var errNoNvidiaSMI = errors.New("nvidia-smi is not on PATH")

// ListGPUs asks nvidia-smi for the index and UUID of every GPU.
func ListGPUs(ctx context.Context) (Indexes, error) {
	bin, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, errNoNvidiaSMI
	}
	ctx, cancel := context.WithTimeout(ctx, leaseKeyTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, cliarg.QueryGPU.Eq("index,uuid"), cliarg.Format.Eq("csv,noheader")).Output()
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi --query-gpu=index,uuid: %w", err)
	}
	return parseIndexes(out)
}

// parseIndexes reads nvidia-smi's "index, uuid" lines.
func parseIndexes(out []byte) (Indexes, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.TrimLeadingSpace = true
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi's GPU list: %w", err)
	}
	m := Indexes{}
	for _, row := range rows {
		if len(row) != 2 || row[0] == "" || row[1] == "" {
			return nil, fmt.Errorf("nvidia-smi's GPU list: want \"index, uuid\" lines, got %q", strings.Join(row, ","))
		}
		m[strings.ToLower(row[1])] = row[0]
	}
	return m, nil
}

// CanonicalGPUs turns every GPU UUID of gpus that list knows into its
// index. Without nvidia-smi the ids stay as given, and note says so: a
// container given GPU 0 and another given its UUID then take two locks.
func CanonicalGPUs(ctx context.Context, gpus GPUs, list func(context.Context) (Indexes, error)) (GPUs, string) {
	if len(gpus.IDs) == 0 || !slices.ContainsFunc(gpus.IDs, isGPUUUID) {
		return gpus, ""
	}
	idx, err := list(ctx)
	if err != nil {
		return gpus, fmt.Sprintf("vllm container: GPU UUIDs are locked as given, not as their indexes (%v): a start given the same GPU by index is not kept out", err)
	}
	out := GPUs{All: gpus.All}
	for _, id := range gpus.IDs {
		if i, ok := idx[strings.ToLower(id)]; ok {
			id = i
		}
		out.IDs = append(out.IDs, id)
	}
	return out, ""
}

// isGPUUUID reports whether id is a GPU UUID (GPU-...), which nvidia-smi
// maps to an index; MIG instances (MIG-...) have no index of their own.
func isGPUUUID(id string) bool { return strings.HasPrefix(strings.ToUpper(id), "GPU-") }
