package realcluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a binary the harness started, its output going to a log file. Stop ends it and
// everything it started (its process group).
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
	err     error
	stop    sync.Once
}

// StartProcess starts argv in its own process group with its standard output and error in
// dir/name.log, and extra added to its environment.
func StartProcess(dir, name string, argv []string, extra ...string) (*Process, error) {
	return startProcessTo(dir, name, argv, "", extra...)
}

// startProcessTo is StartProcess with standard output in the file stdout (os.DevNull to discard
// it), or in the log when stdout is empty.
func startProcessTo(dir, name string, argv []string, stdout string, extra ...string) (*Process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("log of %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	if stdout != "" {
		out, err := os.Create(stdout)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("standard output of %s: %w", name, err)
		}
		defer out.Close() // the child has its own descriptor
		cmd.Stdout = out
	}
	cmd.Env = append(os.Environ(), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, argv[0], err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// signal sends SIGTERM to the process group without waiting, so that many processes stop together.
func (p *Process) signal() error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	return syscall.Kill(-p.Pid(), syscall.SIGTERM)
}

// Stop sends SIGTERM to the process group, and SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) {
	p.stop.Do(func() {
		if exited, _ := p.Exited(); exited {
			return
		}
		_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
			<-p.done
		}
	})
}

// Tail is the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", p.LogPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Usage is what a process has used so far, as /proc reports it.
type Usage struct {
	// CPU is user plus system time.
	CPU time.Duration
	// PeakRSS is the resident set's high-water mark (VmHWM), RSS its current size (VmRSS), in bytes.
	PeakRSS, RSS uint64
}

// Add sums two usages: the usage of several processes, such as kubemark's hollow nodes.
func (u Usage) Add(o Usage) Usage {
	return Usage{CPU: u.CPU + o.CPU, PeakRSS: u.PeakRSS + o.PeakRSS, RSS: u.RSS + o.RSS}
}

// Usage reads the process's CPU time from /proc/<pid>/stat and its memory from /proc/<pid>/status.
// It must be read before the process ends.
func (p *Process) Usage() (Usage, error) {
	return ProcUsage(p.Pid())
}

// userHZ is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on every Linux architecture Go
// supports (the kernel scales its internal HZ to it for user space).
const userHZ = 100

// ProcUsage reads pid's usage from /proc.
func ProcUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(string(stat))
	if err != nil {
		return Usage{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read the memory of process %d: %w", pid, err)
	}
	u := Usage{CPU: cpu}
	if u.PeakRSS, err = statusKB(string(status), "VmHWM"); err != nil {
		return Usage{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	if u.RSS, err = statusKB(string(status), "VmRSS"); err != nil {
		return Usage{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return u, nil
}

// parseStatCPU reads utime and stime, fields 14 and 15 of /proc/<pid>/stat. The command name,
// field 2, is in parentheses and may hold spaces and parentheses itself, so fields are counted
// from the last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name in parentheses")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// statusKB reads a "Name:   123 kB" line of /proc/<pid>/status, in bytes.
func statusKB(status, name string) (uint64, error) {
	for _, line := range strings.Split(status, "\n") {
		v, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: unexpected value %q", name, v)
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return n * 1024, nil
	}
	return 0, fmt.Errorf("no %s line", name)
}

// LoadAverage is the machine's load average over 1, 5 and 15 minutes, from /proc/loadavg.
func LoadAverage() ([3]float64, error) {
	var l [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return l, fmt.Errorf("read the load average: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return l, fmt.Errorf("/proc/loadavg: %q", b)
	}
	for i := range l {
		if l[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return l, fmt.Errorf("/proc/loadavg: %w", err)
		}
	}
	return l, nil
}
