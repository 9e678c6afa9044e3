// Package setting words an error about a caller's settings without
// knowing how they were given. A library names each setting by its
// Config field, in braces ("{Alpha} %g: want a level between 0 and 1"),
// under its package's scope; the error reads with the field's name
// ("Alpha 2: want ..."), or with a label given after a colon
// ("{Target:a target URL}" reads "a target URL"), and a command that
// takes the settings as flags renames the fields to its flag names in one
// table (Rename).
package setting

import (
	"fmt"
	"regexp"
	"strings"
)

// Error is an error about settings: Format and Args as fmt's, where
// "{Field}" or "{Field:label}" in Format names a setting of Scope's
// Config.
type Error struct {
	// Scope is the package whose settings are named: "history".
	Scope  string
	Format string
	Args   []any
}

// Scope returns an Errorf for the settings of package scope.
func Scope(scope string) func(format string, args ...any) error {
	return func(format string, args ...any) error {
		return &Error{Scope: scope, Format: format, Args: args}
	}
}

// field is a setting's name in a Format, with its label if any: "{Alpha}",
// "{Target:a target URL}".
var field = regexp.MustCompile(`\{([A-Z][A-Za-z0-9]*)(?::([^{}]+))?\}`)

// Error reads with each setting's field name.
func (e *Error) Error() string { return e.Named(nil) }

// Unwrap returns the errors the %w verbs in Format wrap.
func (e *Error) Unwrap() []error {
	switch u := fmt.Errorf(e.Format, e.Args...).(type) {
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}

// Fields are the settings Format names, as "scope.Field".
func (e *Error) Fields() []string {
	var out []string
	for _, m := range field.FindAllStringSubmatch(e.Format, -1) {
		out = append(out, e.Scope+"."+m[1])
	}
	return out
}

// Named reads with each setting renamed by names (keyed "scope.Field");
// a setting names lacks reads with its label, else its field name.
func (e *Error) Named(names map[string]string) string {
	format := field.ReplaceAllStringFunc(e.Format, func(m string) string {
		sub := field.FindStringSubmatch(m)
		f := sub[1]
		if n, ok := names[e.Scope+"."+f]; ok {
			f = n
		} else if sub[2] != "" {
			f = sub[2]
		}
		return strings.ReplaceAll(f, "%", "%%")
	})
	return fmt.Errorf(format, e.Args...).Error()
}

// Rename returns err worded with names (keyed "scope.Field") where its
// chain holds an *Error, an *Error wrapped in another included: the same
// chain (errors.Is and As see through it), the settings named as the
// caller knows them. Other errors return as they are.
func Rename(err error, names map[string]string) error {
	found := settingErrors(err, nil)
	if len(found) == 0 {
		return err
	}
	msg := err.Error()
	for _, se := range found { // outer first: its text holds the inner's
		msg = strings.Replace(msg, se.Error(), se.Named(names), 1)
	}
	return &renamed{msg: msg, err: err}
}

// settingErrors appends the *Errors of err's chain to out, outer first.
func settingErrors(err error, out []*Error) []*Error {
	if se, ok := err.(*Error); ok {
		out = append(out, se)
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			out = settingErrors(w, out)
		}
	case interface{ Unwrap() []error }:
		for _, w := range u.Unwrap() {
			out = settingErrors(w, out)
		}
	}
	return out
}

// renamed is an error read with its settings renamed.
type renamed struct {
	msg string
	err error
}

func (r *renamed) Error() string { return r.msg }
func (r *renamed) Unwrap() error { return r.err }
