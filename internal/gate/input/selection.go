package input

import (
	"fmt"
)

// Selection is what a filter kept of the two sides: benchstat's benchproc
// query and how many benchmark lines (runs) it left out of each.
type Selection struct {
	// Flag names the filter in the report: the command's flag
	// (gate.Config.FilterFlag), "filter" without one.
	Flag                    string
	Query                   string
	LeftOutBase, LeftOutNew int
}

// String says what was left out: the filter (its flag), its query and
// the benchmark lines it left out of each side.
func (s *Selection) String() string {
	if s == nil {
		return ""
	}
	flag := s.Flag
	if flag == "" {
		flag = "filter"
	}
	return fmt.Sprintf("%s '%s': %d baseline and %d new benchmark lines left out (not gated, limits not checked)", flag, s.Query, s.LeftOutBase, s.LeftOutNew)
}

// An EmptySelectionError is a filter that leaves a side without any
// benchmark: the query's keys do not match the side's names.
type EmptySelectionError struct {
	Query, Input string
	LeftOut      int
}

func (e *EmptySelectionError) Error() string { return "filter " + e.Detail() }

// Detail is the error after the word for the filter (FilterError.Detail).
func (e *EmptySelectionError) Detail() string {
	return fmt.Sprintf("'%s' selects no benchmark of %s (%d lines left out): check the keys against its names, e.g. /profile:basic /scenario:ttft-tpot", e.Query, e.Input, e.LeftOut)
}

// SelectBoth cuts both sides to the benchproc filter query (NewSelection),
// nil without one; a side it leaves empty is an *EmptySelectionError.
// The Selection's Flag is the caller's to set.
func SelectBoth(query string, base, next *Input) (*Selection, error) {
	if query == "" {
		return nil, nil
	}
	f, err := NewSelection(query)
	if err != nil {
		return nil, err
	}
	sel := &Selection{Query: query}
	for _, side := range []struct {
		in      *Input
		leftOut *int
	}{{base, &sel.LeftOutBase}, {next, &sel.LeftOutNew}} {
		if *side.leftOut, err = side.in.Keep(f); err != nil {
			return nil, err
		}
		if len(side.in.Results) == 0 && len(side.in.RunChecks) == 0 {
			return nil, &EmptySelectionError{Query: query, Input: side.in.Name, LeftOut: *side.leftOut}
		}
	}
	return sel, nil
}
