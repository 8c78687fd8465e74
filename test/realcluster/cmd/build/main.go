// Command build builds the binaries the real-cluster tests and the side-by-side benchmark run,
// into one directory outside the repository:
//
//		cd test/realcluster && go run ./cmd/build -o ~/.cache/minikubelet-e2e/bin
//		export MINIKUBELET_E2E_BIN_DIR=~/.cache/minikubelet-e2e/bin
//
//	  - kube-apiserver, kube-controller-manager, kube-scheduler and kubemark, built from
//	    k8s.io/kubernetes at the version this module's go.mod requires (the module proxy serves it),
//	    with the version stamped as the Kubernetes release build stamps it;
//	  - kwok, `go install sigs.k8s.io/kwok/cmd/kwok@v0.8.0`, and kwok-stages.yaml, the stages
//	    kwokctl gives kwok by default (node-initialize, node-heartbeat-with-lease, pod-ready,
//	    pod-complete, pod-delete), read from the kwok module's source;
//	  - minikubelet, built from this checkout (every time: the checkout changes);
//	  - etcd, a link to Debian's (apt-get install etcd-server).
//
// The Kubernetes binaries and kwok are built once: a later run keeps them unless -force.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kwokVersion is the KWOK release the benchmark compares with.
const kwokVersion = "v0.8.0"

// kwokStages are kwokctl's default stages for a cluster whose nodes have leases
// (getDefaultNodeStages with a lease, getDefaultPodStages), as paths in the kwok module.
var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

var kubernetesTools = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubemark"}

func main() {
	out := flag.String("o", "", "directory to build into (required; keep it outside the repository)")
	force := flag.Bool("force", false, "rebuild the Kubernetes binaries and kwok even if they are there")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/build -o DIR [-force]")
		os.Exit(2)
	}
	if err := build(*out, *force); err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
}

func build(out string, force bool) error {
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	modDir, err := goOutput("", "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return fmt.Errorf("find this module (run it from test/realcluster): %w", err)
	}
	if mod, _ := goOutput(modDir, "list", "-m"); mod != "github.com/minikubelet/minikubelet/realcluster" {
		return fmt.Errorf("run it from test/realcluster, not from the module %q", mod)
	}
	repo := filepath.Join(modDir, "..", "..")

	if force || missing(out, kubernetesTools...) {
		version, err := goOutput(modDir, "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
		if err != nil {
			return err
		}
		major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
		minor, _, _ = strings.Cut(minor, ".")
		pkg := "k8s.io/component-base/version."
		ldflags := strings.Join([]string{"-s", "-w",
			"-X", pkg + "gitVersion=" + version, "-X", pkg + "gitMajor=" + major, "-X", pkg + "gitMinor=" + minor,
			"-X", pkg + "gitTreeState=clean"}, " ")
		step("building %s %s (tens of minutes the first time)", strings.Join(kubernetesTools, ", "), version)
		if err := goRun(modDir, nil, "build", "-trimpath", "-ldflags", ldflags, "-o", out+string(filepath.Separator), "tool"); err != nil {
			return err
		}
	}
	if force || missing(out, "kwok") {
		step("installing kwok %s", kwokVersion)
		if err := goRun(os.TempDir(), []string{"GOBIN=" + out}, "install", "-trimpath", "sigs.k8s.io/kwok/cmd/kwok@"+kwokVersion); err != nil {
			return err
		}
	}
	if err := writeKwokStages(modDir, filepath.Join(out, "kwok-stages.yaml")); err != nil {
		return err
	}
	step("building minikubelet from %s", repo)
	if err := goRun(repo, nil, "build", "-o", filepath.Join(out, "minikubelet"), "./cmd/minikubelet"); err != nil {
		return err
	}
	if err := linkEtcd(out); err != nil {
		return err
	}
	fmt.Printf("export MINIKUBELET_E2E_BIN_DIR=%s\n", out)
	return nil
}

// writeKwokStages concatenates kwokctl's default stages from the kwok module's source.
func writeKwokStages(modDir, path string) error {
	js, err := goOutput(modDir, "mod", "download", "-json", "sigs.k8s.io/kwok@"+kwokVersion)
	if err != nil {
		return err
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return fmt.Errorf("go mod download of kwok: %w", err)
	}
	if m.Error != "" {
		return fmt.Errorf("go mod download of kwok: %s", m.Error)
	}
	var docs []string
	for _, s := range kwokStages {
		b, err := os.ReadFile(filepath.Join(m.Dir, s))
		if err != nil {
			return fmt.Errorf("kwok's stage %s: %w", s, err)
		}
		docs = append(docs, "# "+s+" of sigs.k8s.io/kwok@"+kwokVersion+"\n"+strings.TrimSpace(string(b))+"\n")
	}
	step("writing %s", path)
	return os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644)
}

// linkEtcd links Debian's etcd into out.
func linkEtcd(out string) error {
	dst := filepath.Join(out, "etcd")
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	src, err := exec.LookPath("etcd")
	if err != nil {
		return errors.New("no etcd on PATH: install Debian's etcd-server (apt-get install etcd-server), or put an etcd binary into the directory")
	}
	step("linking %s", src)
	return os.Symlink(src, dst)
}

func missing(dir string, names ...string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return true
		}
	}
	return false
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "build: "+format+"\n", args...)
}

func goRun(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s (in %s): %w", strings.Join(args, " "), dir, err)
	}
	return nil
}

func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}
