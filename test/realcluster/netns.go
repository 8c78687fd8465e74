package realcluster

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// EnvNetNS is set in a test binary that InNetNS started inside a network namespace; its value
// is the namespace's non-loopback address.
const EnvNetNS = "MINIKUBELET_E2E_NETNS_ADDR"

var netnsSeq atomic.Int64

// InNetNS runs the calling test again, alone, in a network namespace of its own whose loopback
// interface carries addr (such as 10.250.0.1) beside 127.0.0.1, and reports where the caller is:
//
//	addr, inside := InNetNS(t, "10.250.0.1")
//	if !inside {
//		return // the test ran in the namespace, and its result is this test's
//	}
//	// here everything the test starts listens and dials inside the namespace
//
// kube-apiserver refuses to proxy nodes/proxy, pods/log and the like to a loopback node
// address; in the namespace a node can advertise addr, which is not loopback, and nothing
// outside the namespace can reach it or be reached from it. The namespace needs root and
// iproute2's ip; without them the test skips. The namespace is deleted when the test ends.
func InNetNS(t *testing.T, addr string) (string, bool) {
	t.Helper()
	if a := os.Getenv(EnvNetNS); a != "" {
		return a, true
	}
	if net.ParseIP(addr) == nil {
		t.Fatalf("InNetNS: %q is not an IP address", addr)
	}
	ip, err := exec.LookPath("ip")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("a network namespace needs root and iproute2's ip")
	}
	name := fmt.Sprintf("minikubelet-e2e-%d-%d", os.Getpid(), netnsSeq.Add(1))
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(ip, args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command(ip, "netns", "delete", name).Run() })
	run("-n", name, "link", "set", "lo", "up")
	run("-n", name, "addr", "add", addr+"/32", "dev", "lo")

	args := []string{"netns", "exec", name, os.Args[0], "-test.run=" + runPattern(t.Name()), "-test.v", "-test.count=1"}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(ip, args...)
	cmd.Env = append(os.Environ(), EnvNetNS+"="+addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("run the test in network namespace %s: %v", name, err)
	}
	skipped := copyLines(t, out, "--- SKIP: "+t.Name()+" ")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the test in network namespace %s failed: %v", name, err)
	}
	if skipped {
		t.Skip("skipped in the network namespace")
	}
	return addr, false
}

// copyLines logs r's lines and reports whether one starts with prefix.
func copyLines(t *testing.T, r io.Reader, prefix string) bool {
	found := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		t.Log("netns: " + line)
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			found = true
		}
	}
	return found
}

// runPattern is a -test.run pattern that matches the test named name (with its subtests'
// slashes) and nothing else.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
