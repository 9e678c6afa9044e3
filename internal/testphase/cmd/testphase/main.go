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
// with -list one "package test phase [fault] [lane] file:line" line per test
// instead. For the alone phase, -lane NAME narrows it to one lane, and
// -lanes prints the lanes that hold a test instead (one a line), for make
// to run them at the same time:
//
//	go run ./internal/testphase/cmd/testphase -lanes alone ./...
//	go run ./internal/testphase/cmd/testphase -lane containers alone ./...
//
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
	lanes := flag.Bool("lanes", false, "print the alone phase's lanes that hold a test, one a line, instead of go test's arguments")
	lane := flag.String("lane", "", "only the tests of this lane of the alone phase")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/testphase/cmd/testphase [-list | -lanes] [-lane NAME] measured|timed|alone|fault [package patterns]")
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Args()[1:], *list, *lanes, testphase.LaneName(*lane)); err != nil {
		fmt.Fprintln(os.Stderr, "testphase:", err)
		os.Exit(1)
	}
}

func run(kind string, patterns []string, list, lanes bool, lane testphase.LaneName) error {
	all, err := testphase.List(".")
	if err != nil {
		return err
	}
	sel, err := testphase.Select(all, kind, patterns...)
	if err != nil {
		return err
	}
	if (lanes || lane != "") && kind != string(testphase.PhaseAlone) {
		return fmt.Errorf("-lanes and -lane are for the alone phase, not %s", kind)
	}
	if lanes {
		for _, l := range testphase.UsedLanes(sel) {
			fmt.Println(l)
		}
		return nil
	}
	if lane != "" {
		if sel, err = testphase.InLane(sel, lane); err != nil {
			return err
		}
	}
	if list {
		for _, d := range sel {
			extra := ""
			if d.Fault {
				extra += " fault"
			}
			if d.Lane != "" {
				extra += " " + string(d.Lane)
			}
			fmt.Printf("%s %s %s%s %s\n", d.Pkg, d.Test, d.Phase, extra, d.Pos)
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
