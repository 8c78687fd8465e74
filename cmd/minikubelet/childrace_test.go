package main

import (
	"strings"
	"testing"
)

// raceReportLines is how much of a child's first race report a failure quotes: the access, the
// previous access and the goroutines' creation sites fit, and a child with many reports does
// not flood the log.
const raceReportLines = 40

// raceReport returns the start of the first data race report in a child process's standard
// error and how many reports it holds. Under -race the children this package starts are race
// builds of the test binary, and their reports go to their own standard error only: a child
// ended with SIGKILL loses the exit code 66 that would have said so, and a child killed at the
// end of a passing test has its standard error read by nobody.
func raceReport(stderr string) (report string, count int) {
	const warning = "WARNING: DATA RACE"
	count = strings.Count(stderr, warning)
	if count == 0 {
		return "", 0
	}
	lines := strings.SplitN(stderr[strings.Index(stderr, warning):], "\n", raceReportLines+1)
	if len(lines) > raceReportLines {
		lines = append(lines[:raceReportLines], "...")
	}
	return strings.Join(lines, "\n"), count
}

// checkChildRace fails tb if the child process named name wrote a data race report to the
// standard error it left, quoting the first one. Call it once the child has exited and its
// standard error is complete.
func checkChildRace(tb testing.TB, name, stderr string) {
	tb.Helper()
	if report, count := raceReport(stderr); count > 0 {
		tb.Errorf("%s wrote %d data race report(s) to its standard error; the first:\n%s", name, count, report)
	}
}

func TestRaceReport(t *testing.T) {
	const report = "==================\nWARNING: DATA RACE\nWrite at 0x00c000012345 by goroutine 7:\n  main.f()\n"
	long := "WARNING: DATA RACE\n" + strings.Repeat("  frame\n", 100)
	for _, tc := range []struct {
		name       string
		stderr     string
		wantReport string
		wantCount  int
	}{
		{name: "none", stderr: "I1129 started\nE1129 a logged error, no race\n"},
		{name: "empty"},
		{
			name:       "one among logs",
			stderr:     "I1129 started\n" + report + "==================\nI1129 more\n",
			wantReport: "WARNING: DATA RACE\nWrite at 0x00c000012345 by goroutine 7:\n  main.f()\n==================\nI1129 more\n",
			wantCount:  1,
		},
		{
			name:       "two, the first quoted",
			stderr:     report + "==================\n" + strings.Replace(report, "goroutine 7", "goroutine 9", 1),
			wantReport: "WARNING: DATA RACE\nWrite at 0x00c000012345 by goroutine 7:\n  main.f()\n==================\n==================\nWARNING: DATA RACE\nWrite at 0x00c000012345 by goroutine 9:\n  main.f()\n",
			wantCount:  2,
		},
		{
			name:       "long, cut",
			stderr:     long,
			wantReport: "WARNING: DATA RACE\n" + strings.Repeat("  frame\n", raceReportLines-1) + "...",
			wantCount:  1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotReport, gotCount := raceReport(tc.stderr)
			if gotReport != tc.wantReport || gotCount != tc.wantCount {
				t.Errorf("raceReport(%q) = %q, %d, want %q, %d", tc.stderr, gotReport, gotCount, tc.wantReport, tc.wantCount)
			}
		})
	}
}
