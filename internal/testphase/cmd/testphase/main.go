// Command testphase prints the go test arguments of one phase of make test
// (package testphase): the -run pattern of the tests that declare it and
// the packages that define them, for the Makefile to run.
//
//	go run ./internal/testphase/cmd/testphase timed ./...
//	-run '^(TestTimingA|TestTimingB)$' ./internal/x ./internal/y
//
// The kind is measured, timed, alone or fault; the patterns (go test's
// "./...", "./x/...", a package folder; none: all) narrow the packages.
// It prints nothing when no test of those packages declares the kind, and
// with -list one "package test phase [fault] file:line" line per test instead.
// Run it from the module root.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

func main() {
	list := flag.Bool("list", false, "print the tests of the kind, one a line, instead of go test's arguments")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/testphase/cmd/testphase [-list] measured|timed|alone|fault [package patterns]")
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *list); err != nil {
		fmt.Fprintln(os.Stderr, "testphase:", err)
		os.Exit(1)
	}
}

func run(kind string, patterns []string, list bool) error {
	all, err := testphase.List(".")
	if err != nil {
		return err
	}
	sel, err := testphase.Select(all, kind, patterns...)
	if err != nil {
		return err
	}
	if list {
		for _, d := range sel {
			fault := ""
			if d.Fault {
				fault = " fault"
			}
			fmt.Printf("%s %s %s%s %s\n", d.Pkg, d.Test, d.Phase, fault, d.Pos)
		}
		return nil
	}
	args, err := testphase.GoTestArgs(all, sel)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		fmt.Println(strings.Join(args, " "))
	}
	return nil
}
