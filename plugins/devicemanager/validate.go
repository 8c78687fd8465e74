package devicemanager

import (
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// SupportedVersions are the device plugin API versions the kubelet serves.
var SupportedVersions = []string{pluginapi.Version}

// ErrInvalidRegistration is wrapped by the validation errors of both registration paths.
var ErrInvalidRegistration = errors.New("invalid device plugin registration")

// IsExtendedResourceName is core/v1 helper IsExtendedResourceName: a prefixed name outside the
// kubernetes.io namespace that is a valid quota resource name after "requests.".
func IsExtendedResourceName(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+name)) == 0
}

// validateRegisterRequest is the classic Register path's validation on kubelet.sock.
func validateRegisterRequest(version, resource string) error {
	if !slices.Contains(SupportedVersions, version) {
		return kerr(ErrInvalidRegistration, "requested API version %q is not supported by kubelet. Supported version is %q", version, SupportedVersions)
	}
	if !IsExtendedResourceName(resource) {
		return kerr(ErrInvalidRegistration, "the ResourceName %q is invalid", resource)
	}
	return nil
}

// ValidatePlugin is the plugin manager path's validation: the advertised versions must include
// v1beta1 and the name must be an extended resource name.
func ValidatePlugin(name string, versions []string) error {
	if !slices.Contains(versions, pluginapi.Version) {
		return kerr(ErrInvalidRegistration, "manager version, %s, is not among plugin supported versions %v", pluginapi.Version, versions)
	}
	if !IsExtendedResourceName(name) {
		return kerr(ErrInvalidRegistration, "invalid name of device plugin socket: the ResourceName %q is invalid", name)
	}
	return nil
}
