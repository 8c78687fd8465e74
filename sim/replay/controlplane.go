package replay

import (
	"errors"
	"fmt"
	"slices"

	"github.com/minikubelet/minikubelet/sim/world"
)

// validateControlPlane checks the controllers and peer nodes.
func (s *Scenario) validateControlPlane() error {
	var errs []error
	if (len(s.Controllers) > 0 || len(s.PeerNodes) > 0) && !s.hasSource("api") {
		errs = append(errs, errors.New("controllers and peerNodes need the api source: add it to sources"))
	}
	if names, err := world.ControllerNames(s.Controllers); err != nil {
		errs = append(errs, fmt.Errorf("controllers: %w", err))
	} else {
		s.Controllers = names
	}
	for _, p := range s.PeerNodes {
		if p == "" || slices.Contains(s.nodeNames(), p) {
			errs = append(errs, fmt.Errorf("peerNodes: %q must be named and differ from the simulated nodes", p))
		}
	}
	return errors.Join(errs...)
}
