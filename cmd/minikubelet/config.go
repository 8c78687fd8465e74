package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minikubelet/minikubelet/trace"
)

// The kubelet's defaults for the settings minikubelet shares with it (KubeletConfiguration v1beta1).
const (
	defaultFileCheckFrequency = 20 * time.Second
	defaultHTTPCheckFrequency = 20 * time.Second
	defaultSyncFrequency      = time.Minute
)

// runConfig is everything `minikubelet run` needs, after flags and the --config file are merged.
type runConfig struct {
	NodeName           string
	StaticPodPath      string
	StaticPodURL       string
	StaticPodURLHeader http.Header
	FileCheckFrequency time.Duration
	HTTPCheckFrequency time.Duration
	SyncFrequency      time.Duration
	TraceFormat        trace.Format

	APIServerAddr string // where the embedded API server listens
	// APIServerFallback lets the embedded API server take a free port when APIServerAddr is in
	// use: true for the default address, false for one the user chose.
	APIServerFallback bool
	Kubeconfig        string // an existing API server instead of the embedded one
	WriteKubeconfig   string // where to write a kubeconfig for the embedded API server
	Standalone        bool   // no API server at all
	// Announce receives the start-up screen's kubectl line (standard error); nil prints nothing.
	Announce io.Writer
}

func (c *runConfig) validate() error {
	var errs []error
	if c.NodeName == "" {
		errs = append(errs, errors.New("node name is empty: set --hostname-override"))
	}
	for name, d := range map[string]time.Duration{
		"fileCheckFrequency": c.FileCheckFrequency,
		"httpCheckFrequency": c.HTTPCheckFrequency,
		"syncFrequency":      c.SyncFrequency,
	} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %v", name, d))
		}
	}
	if c.Standalone && c.Kubeconfig != "" {
		errs = append(errs, errors.New("--standalone and --kubeconfig exclude each other"))
	}
	if c.Standalone && c.WriteKubeconfig != "" {
		errs = append(errs, errors.New("--write-kubeconfig needs an API server: drop --standalone"))
	}
	if c.Kubeconfig != "" && c.WriteKubeconfig != "" {
		errs = append(errs, errors.New("--write-kubeconfig only applies to the embedded API server: drop --kubeconfig"))
	}
	return errors.Join(errs...)
}

// kubeletConfigFile is the part of a kubelet.config.k8s.io/v1beta1 KubeletConfiguration that
// minikubelet reads. Other fields are accepted and ignored, so a real kubelet's file works as is.
type kubeletConfigFile struct {
	APIVersion         string              `json:"apiVersion"`
	Kind               string              `json:"kind"`
	StaticPodPath      string              `json:"staticPodPath"`
	StaticPodURL       string              `json:"staticPodURL"`
	StaticPodURLHeader map[string][]string `json:"staticPodURLHeader"`
	FileCheckFrequency *duration           `json:"fileCheckFrequency"`
	HTTPCheckFrequency *duration           `json:"httpCheckFrequency"`
	SyncFrequency      *duration           `json:"syncFrequency"`
}

// duration decodes a metav1.Duration string such as "20s".
type duration struct{ time.Duration }

func (d *duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("parse duration %s: %w", b, err)
	}
	d.Duration = v
	return nil
}

// loadKubeletConfig reads a KubeletConfiguration file into cfg. It only sets what the file sets;
// the caller applies command-line flags afterwards, because the kubelet gives flags precedence.
func loadKubeletConfig(path string, cfg *runConfig) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read kubelet config: %w", err)
	}
	var f kubeletConfigFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("kubelet config %s: %w", path, err)
	}
	if f.Kind != "KubeletConfiguration" || f.APIVersion != "kubelet.config.k8s.io/v1beta1" {
		return fmt.Errorf("kubelet config %s: want apiVersion kubelet.config.k8s.io/v1beta1 and kind KubeletConfiguration, got %q %q",
			path, f.APIVersion, f.Kind)
	}
	cfg.StaticPodPath = f.StaticPodPath
	cfg.StaticPodURL = f.StaticPodURL
	if f.StaticPodURLHeader != nil {
		cfg.StaticPodURLHeader = http.Header{}
		for k, vs := range f.StaticPodURLHeader {
			for _, v := range vs {
				cfg.StaticPodURLHeader.Add(k, v)
			}
		}
	}
	for _, set := range []struct {
		from *duration
		to   *time.Duration
	}{
		{f.FileCheckFrequency, &cfg.FileCheckFrequency},
		{f.HTTPCheckFrequency, &cfg.HTTPCheckFrequency},
		{f.SyncFrequency, &cfg.SyncFrequency},
	} {
		if set.from != nil {
			*set.to = set.from.Duration
		}
	}
	return nil
}

// defaultAPIServerAddr is where the embedded API server listens unless told otherwise: the
// kube-apiserver's secure port on loopback, the same at every start, so that a kubectl watching
// the node survives a restart of the simulator.
const defaultAPIServerAddr = "127.0.0.1:6443"

// fallbackAPIServerAddr is where it listens when defaultAPIServerAddr is taken.
const fallbackAPIServerAddr = "127.0.0.1:0"

// defaultKubeconfigPath is where run writes a kubeconfig for its embedded API server unless
// --write-kubeconfig says otherwise: minikubelet/kubeconfig in the user's cache directory
// ($XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS).
func defaultKubeconfigPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the default kubeconfig path (set --write-kubeconfig): %w", err)
	}
	return filepath.Join(dir, "minikubelet", "kubeconfig"), nil
}

// parseURLHeader parses --manifest-url-header, "key:value,key:value"; a key may repeat and its
// values accumulate, as with the kubelet's flag.
func parseURLHeader(s string) (http.Header, error) {
	h := http.Header{}
	if s == "" {
		return h, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--manifest-url-header %q: want key:value pairs separated by commas", s)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h, nil
}
