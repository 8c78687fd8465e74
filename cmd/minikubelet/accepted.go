package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// The kubelet's v1.35 flags that minikubelet accepts without simulating what they set, so that a
// kubelet's command line (kubeadm's, a systemd unit's) runs as it is. Each one used is reported
// once at start. The flags minikubelet honours (--pod-manifest-path, --max-pods, ...) are bound
// in flags.go; --pod-infra-container-image is one that v1.35 no longer has but kubeadm's
// kubeadm-flags.env of older clusters still carries.
var (
	acceptedBoolFlags = []string{
		"cgroups-per-qos", "contention-profiling",
		"cpu-cfs-quota", "enable-controller-attach-detach", "exit-on-lock-contention", "experimental-allocatable-ignore-eviction", "fail-cgroupv1",
		"fail-swap-on", "kernel-memcg-notification", "local-storage-capacity-isolation",
		"make-iptables-util-chains", "protect-kernel-defaults", "register-node", "rotate-certificates",
		"rotate-server-certificates", "runonce", "seccomp-default",
	}
	acceptedValueFlags = []string{
		"allowed-unsafe-sysctls", "bootstrap-kubeconfig", "cgroup-driver", "cgroup-root", "cloud-provider", "cluster-dns", "cluster-domain", "config-dir", "container-log-max-files",
		"container-log-max-size", "container-runtime-endpoint", "cpu-cfs-quota-period",
		"cpu-manager-policy", "cpu-manager-policy-options", "cpu-manager-reconcile-period",
		"enforce-node-allocatable", "event-burst", "event-qps", "eviction-hard",
		"eviction-max-pod-grace-period", "eviction-minimum-reclaim",
		"eviction-pressure-transition-period", "eviction-soft", "eviction-soft-grace-period",
		"experimental-mounter-path", "feature-gates", "hairpin-mode", "healthz-bind-address",
		"healthz-port", "image-credential-provider-bin-dir", "image-credential-provider-config",
		"image-gc-high-threshold", "image-gc-low-threshold", "image-service-endpoint", "kube-api-burst",
		"kube-api-content-type", "kube-api-qps", "kube-reserved", "kube-reserved-cgroup",
		"kubelet-cgroups", "lock-file", "max-open-files", "maximum-dead-containers",
		"maximum-dead-containers-per-container", "memory-manager-policy",
		"minimum-container-ttl-duration", "minimum-image-ttl-duration", "node-labels",
		"node-status-max-images", "oom-score-adj", "pod-cidr", "pod-infra-container-image",
		"pod-max-pids", "pods-per-core", "provider-id", "qos-reserved", "read-only-port",
		"register-with-taints", "registry-burst", "registry-qps", "reserved-cpus", "reserved-memory",
		"resolv-conf", "runtime-cgroups", "runtime-request-timeout", "streaming-connection-idle-timeout",
		"system-cgroups", "system-reserved", "system-reserved-cgroup", "tls-cipher-suites", "tls-min-version", "topology-manager-policy",
		"topology-manager-policy-options", "topology-manager-scope", "volume-plugin-dir",
		"volume-stats-agg-period",
	}
)

// acceptedFlags holds the values of the accepted kubelet flags.
type acceptedFlags struct {
	bools  map[string]*bool
	values map[string]*string
}

func (a *acceptedFlags) bind(fs *pflag.FlagSet) {
	a.bools, a.values = map[string]*bool{}, map[string]*string{}
	for _, name := range acceptedBoolFlags {
		a.bools[name] = fs.Bool(name, false, "the kubelet's flag: accepted, not simulated")
		_ = fs.MarkHidden(name)
	}
	for _, name := range acceptedValueFlags {
		a.values[name] = fs.String(name, "", "the kubelet's flag: accepted, not simulated")
		_ = fs.MarkHidden(name)
	}
}

// used returns the accepted flags set on the command line, as --name=value, in the order of
// the flag set (sorted).
func (a *acceptedFlags) used(fs *pflag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		_, isBool := a.bools[f.Name]
		_, isValue := a.values[f.Name]
		if f.Changed && (isBool || isValue) {
			out = append(out, "--"+f.Name+"="+f.Value.String())
		}
	})
	return out
}

// report writes, once, which accepted flags were used.
func (a *acceptedFlags) report(w io.Writer, fs *pflag.FlagSet) {
	if used := a.used(fs); len(used) > 0 && w != nil {
		fmt.Fprintf(w, "Warning: kubelet flags accepted, not simulated: %s\n", strings.Join(used, " "))
	}
}
