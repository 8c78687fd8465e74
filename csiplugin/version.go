package csiplugin

import (
	"errors"
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// ErrValidation is wrapped by every refusal of ValidatePlugin.
var ErrValidation = errors.New("csi driver validation failed")

// highestSupportedVersion returns the highest version with major 1 among versions, parsed as
// generic versions; others are skipped.
func highestSupportedVersion(versions []string) (*utilversion.Version, error) {
	if len(versions) == 0 {
		return nil, fmt.Errorf("CSI driver reporting empty array for supported versions: %w", ErrValidation)
	}
	var highest *utilversion.Version
	var errs []error
	for _, s := range versions {
		v, err := utilversion.ParseGeneric(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("version %q: %w", s, err))
			continue
		}
		if v.Major() != 1 {
			continue
		}
		if highest == nil || highest.LessThan(v) {
			highest = v
		}
	}
	if highest == nil {
		return nil, fmt.Errorf("none of the CSI versions reported by this driver are supported: %w", errors.Join(append(errs, ErrValidation)...))
	}
	return highest, nil
}
