package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// Version asks srv's GET /version (vLLM's), through the server's gateway;
// "unknown" when the server does not say.
func Version(ctx context.Context, srv Server) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.BaseURL()+"/version", nil)
	if err != nil {
		return "unknown"
	}
	client := GatewayOf(srv).Client(1)
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return "unknown"
	}
	defer resp.Body.Close()
	var v struct {
		Version string `json:"version"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&v) != nil || v.Version == "" {
		return "unknown"
	}
	return v.Version
}

// LocalGPUs names this machine's GPUs as nvidia-smi lists them, "NAME xN"
// (the first GPU's name and the count); "" without nvidia-smi or a GPU.
func LocalGPUs(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nvidia-smi", cliarg.QueryGPU.Eq("name"), cliarg.Format.Eq("csv,noheader")).Output()
	if names := strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(out)), " ", "_")); err == nil && len(names) > 0 {
		return fmt.Sprintf("%s x%d", strings.ReplaceAll(names[0], "_", " "), len(names))
	}
	return ""
}
