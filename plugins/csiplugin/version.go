package csiplugin

import (
	"errors"
	"fmt"
)

// ErrValidation is matched (errors.Is) by every refusal of ValidatePlugin and RegisterPlugin's
// version check.
var ErrValidation = errors.New("csi driver validation failed")

// PluginName is the CSI volume plugin's name, the prefix of its messages.
const PluginName = "kubernetes.io/csi"

// csiError carries the kubelet's exact message and matches ErrValidation.
type csiError struct{ msg string }

func (e *csiError) Error() string        { return e.msg }
func (e *csiError) Is(target error) bool { return target == ErrValidation }

// logf formats a message as the CSI plugin's log helper does: prefixed with the plugin's name.
func logf(format string, args ...any) string {
	return fmt.Sprintf(PluginName+": "+format, args...)
}
