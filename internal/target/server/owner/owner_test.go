package owner

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
)

// TestParseOwner: the owner label's value round-trips, and a malformed
// one says what is wrong.
func TestParseOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    ID
		wantErr bool
	}{
		// host, pid namespace, pid and start time
		{"runner-1/4026531836/4242/98765", ID{Host: "runner-1", NS: "4026531836", PID: 4242, Start: "98765"}, false},
		// no /proc: no namespace, no start time
		{"mac//17/", ID{Host: "mac", PID: 17}, false},
		// a pid that is not a number
		{"h/1/x/1", ID{}, true},
		// a pid of 0 would be the process group
		{"h/1/0/1", ID{}, true},
		// no host
		{"/1/1/2", ID{}, true},
		// the three-field form of no release
		{"h/1/2", ID{}, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err == nil && got.String() != tc.in {
			t.Errorf("String() = %q, want %q", got.String(), tc.in)
		}
	}
}

// TestOwnerCheck: this process is alive; a process that exited is gone;
// a pid whose start time differs was reused (gone); another host's
// owner cannot be looked up (unknown, left alone).
func TestOwnerCheck(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("owners are looked up in /proc (Linux); elsewhere every owner counts as alive")
	}
	me := Self()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited := ID{Host: me.Host, NS: me.NS, PID: cmd.ProcessState.Pid()}
	for _, tc := range []struct {
		name string
		o    ID
		want Liveness
	}{
		{"this process", me, Alive},
		{"an exited process", exited, Gone},
		{"a reused pid", ID{Host: me.Host, NS: me.NS, PID: me.PID, Start: me.Start + "0"}, Gone},
		{"another host", ID{Host: me.Host + "-other", NS: me.NS, PID: me.PID, Start: me.Start}, Unknown},
		{"another pid namespace", ID{Host: me.Host, NS: me.NS + "1", PID: cmd.ProcessState.Pid()}, Unknown},
	} {
		if got := tc.o.Check(); got != tc.want {
			t.Errorf("%s (%s): %v, want %v", tc.name, tc.o, got, tc.want)
		}
	}
	if me.Start == "" || me.NS == "" {
		t.Errorf("this process's start time %q or pid namespace %q is empty: /proc/%s not read", me.Start, me.NS, strconv.Itoa(me.PID))
	}
}
