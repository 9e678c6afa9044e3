package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// HostCPU names this machine's CPU as "MODEL xN" (the first model name
// /proc/cpuinfo lists, N logical CPUs); without /proc/cpuinfo (not
// Linux), the architecture instead of the model.
func HostCPU() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return fmt.Sprintf("%s (model unknown) x%d", runtime.GOARCH, runtime.NumCPU())
	}
	defer f.Close()
	return cpuModel(f, runtime.NumCPU())
}

// cpuModel reads the first "model name" (x86) or "Model" / "CPU part"
// (Arm) line of a /proc/cpuinfo.
func cpuModel(r io.Reader, n int) string {
	sc := bufio.NewScanner(r)
	model := ""
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Model":
			return fmt.Sprintf("%s x%d", strings.Join(strings.Fields(v), " "), n)
		case "CPU part":
			if model == "" {
				model = "Arm CPU part " + strings.TrimSpace(v)
			}
		}
	}
	if model == "" {
		model = runtime.GOARCH + " (model unknown)"
	}
	return fmt.Sprintf("%s x%d", model, n)
}

// nvidia-smi's header names the driver and the CUDA version it supports.
var (
	driverRE = regexp.MustCompile(`Driver Version:\s*(\S+)`)
	cudaRE   = regexp.MustCompile(`CUDA Version:\s*(\S+)`)
)

// LocalDriver is this machine's NVIDIA driver version and the CUDA version
// it supports, read from nvidia-smi's header; Unknown for each without
// nvidia-smi or a GPU.
func LocalDriver(ctx context.Context) (driver, cuda string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nvidia-smi").Output()
	if err != nil {
		return Unknown, Unknown
	}
	return driverVersions(string(out))
}

// driverVersions parses nvidia-smi's header.
func driverVersions(out string) (driver, cuda string) {
	driver, cuda = Unknown, Unknown
	if m := driverRE.FindStringSubmatch(out); m != nil {
		driver = m[1]
	}
	if m := cudaRE.FindStringSubmatch(out); m != nil {
		cuda = m[1]
	}
	return driver, cuda
}
