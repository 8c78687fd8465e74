package config

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// The type a KubeletConfiguration document names.
const (
	APIVersion = "kubelet.config.k8s.io/v1beta1"
	Kind       = "KubeletConfiguration"
)

// V1beta1 is the configuration as it is written: a kubelet.config.k8s.io/v1beta1
// KubeletConfiguration and, beside its fields, capacity, the simulated machine's size.
type V1beta1 struct {
	kubeletconfigv1beta1.KubeletConfiguration `json:",inline"`
	// Capacity is the machine's cpu, memory and ephemeral-storage; one left out keeps
	// nodestatus.DefaultCapacity's. It is the one key that is not KubeletConfiguration's.
	Capacity v1.ResourceList `json:"capacity,omitempty"`
}

// Decode decodes a KubeletConfiguration document, YAML or JSON, as the kubelet decodes its
// config file: strictly first, so that an unknown field (a typo) or a field given twice is a
// strict decoding error, and else leniently. A whole file and a fragment of one (a scenario's
// settings) are decoded alike; apiVersion and kind, when given, must name KubeletConfiguration
// v1beta1 (CheckTypeMeta).
//
// err is a document that cannot be decoded at all (bad YAML, a value of the wrong type, a bad
// duration or quantity); v is nil then. Otherwise v is the lenient decoding, and strictErr, when
// not nil, says what strictness refused: the kubelet logs it and goes on with v.
func Decode(data []byte) (v *V1beta1, strictErr error, err error) {
	doc, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, err
	}
	var strict []error
	// A key given twice is lost by the conversion above (the last one wins, as in the lenient
	// decoding); the strict conversion finds it.
	if _, err := yaml.YAMLToJSONStrict(data); err != nil {
		strict = append(strict, err)
	}
	v = &V1beta1{}
	fieldErrs, err := kjson.UnmarshalStrict(doc, v)
	if err != nil {
		return nil, nil, decodeError(doc, err)
	}
	if v.APIVersion != "" || v.Kind != "" {
		if err := v.CheckTypeMeta(); err != nil {
			return nil, nil, err
		}
	}
	// The strict decoding fills every known field it can, exactly as the lenient one does.
	if strict = append(strict, fieldErrs...); len(strict) > 0 {
		strictErr = runtime.NewStrictDecodingError(strict)
	}
	return v, strictErr, nil
}

// decodeError names the field of a value of the wrong type as the kubelet's own decoding does
// (KubeletConfiguration.maxPods), not through V1beta1: it decodes the document again into the
// KubeletConfiguration alone. An error only the whole V1beta1 has is in capacity.
func decodeError(doc []byte, err error) error {
	var kc kubeletconfigv1beta1.KubeletConfiguration
	if kcErr := kjson.UnmarshalCaseSensitivePreserveInts(doc, &kc); kcErr != nil {
		return kcErr
	}
	return fmt.Errorf("capacity: %w", err)
}

// CheckTypeMeta checks that v's apiVersion and kind are kubelet.config.k8s.io/v1beta1
// KubeletConfiguration. A file must say so; a fragment need not, and Decode checks them only when
// given.
func (v *V1beta1) CheckTypeMeta() error {
	if v.APIVersion != APIVersion || v.Kind != Kind {
		return fmt.Errorf("want apiVersion %s and kind %s, got %q %q", APIVersion, Kind, v.APIVersion, v.Kind)
	}
	return nil
}
