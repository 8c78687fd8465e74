package replay

import (
	"bytes"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/kubelet/config"
)

// Settings are the scenario's settings: a KubeletConfiguration fragment, every v1beta1 key under
// its own name, and capacity, the simulated machine's size. They are decoded, defaulted and
// validated by package config, as `run --config` decodes a file, except that a strict decoding
// error (an unknown or repeated key) is refused: a scenario file is strict everywhere.
type Settings struct {
	// doc is the fragment as written (JSON), kept for kubeletConfig.
	doc []byte
}

// UnmarshalJSON keeps the fragment for kubeletConfig, which decodes it once the whole scenario
// is read.
func (st *Settings) UnmarshalJSON(b []byte) error {
	st.doc = bytes.Clone(b)
	return nil
}

// MarshalJSON writes the fragment back as it was written.
func (st Settings) MarshalJSON() ([]byte, error) {
	if st.doc == nil {
		return []byte("{}"), nil
	}
	return st.doc, nil
}

// validateSettings resolves the scenario's kubelet configuration, with the kubelet's own rules,
// and keeps it for the kubelets the scenario starts.
func (s *Scenario) validateSettings() error {
	c, err := s.kubeletConfig()
	if err != nil {
		return err
	}
	s.kubelet = c
	return nil
}

// kubeletConfig decodes the settings and lays the top-level syncFrequency, fileCheckFrequency,
// httpCheckFrequency and featureGates over them, as the same KubeletConfiguration fields; then it
// defaults, validates and converts the result as `run` does.
func (s *Scenario) kubeletConfig() (*config.Config, error) {
	v := &config.V1beta1{}
	if s.Settings != nil && s.Settings.doc != nil {
		var strictErr, err error
		if v, strictErr, err = config.Decode(s.Settings.doc); err != nil {
			return nil, fmt.Errorf("settings: %w", err)
		}
		if strictErr != nil {
			return nil, fmt.Errorf("settings: %w", strictErr)
		}
	}
	var errs []error
	for _, top := range []struct {
		name     string
		top      *Duration
		settings *metav1.Duration
	}{
		{"syncFrequency", s.SyncFrequency, &v.SyncFrequency},
		{"fileCheckFrequency", s.FileCheckFrequency, &v.FileCheckFrequency},
		{"httpCheckFrequency", s.HTTPCheckFrequency, &v.HTTPCheckFrequency},
	} {
		if top.top == nil {
			continue
		}
		if top.settings.Duration != 0 {
			errs = append(errs, fmt.Errorf("settings.%s and %s are the same setting: give one", top.name, top.name))
		}
		top.settings.Duration = durationOr(top.top, 0)
	}
	if s.FeatureGates != nil {
		if v.FeatureGates != nil {
			errs = append(errs, errors.New("settings.featureGates and featureGates are the same setting: give one"))
		}
		v.FeatureGates = s.FeatureGates
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	config.SetDefaults(v)
	c, err := config.FromV1beta1(v)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	return c, nil
}
