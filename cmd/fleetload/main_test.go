package main

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestProcReaders: the CPU and RSS readers parse this process's /proc entries.
func TestProcReaders(t *testing.T) {
	pid := os.Getpid()
	if s, err := cpuSeconds(pid); err != nil || s < 0 {
		t.Errorf("cpuSeconds(self) = %v, %v", s, err)
	}
	if got := rss(pid); !strings.HasSuffix(got, "kB") {
		t.Errorf("rss(self) = %q, want a size in kB", got)
	}
	if got := rss(0); got != "?" {
		t.Errorf("rss(0) = %q, want ?", got)
	}
	if now, peak := statusKB(pid, "VmRSS:"), statusKB(pid, "VmHWM:"); now <= 0 || peak < now {
		t.Errorf("statusKB(self) = VmRSS %d, VmHWM %d kB, want a peak at least the current size", now, peak)
	}
	if got := statusKB(pid, "NoSuchField:"); got != 0 {
		t.Errorf("statusKB(self, NoSuchField) = %d, want 0", got)
	}
}
