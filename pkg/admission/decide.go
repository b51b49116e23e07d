package admission

import (
	"errors"
	"fmt"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// DecidePod runs the handler's decision on one Pod as for a CREATE, with the
// same decoder. pod must be encoded as the API server sends it (the JSON
// encoding of the typed object). "snatch-webhook mutate" uses it, so that
// its answer is the webhook's.
func DecidePod(m *affinity.Mutator, pod []byte) (affinity.Decision, error) {
	var p podFacts
	var typeErr error
	ok, err := walk(new(walker), pod, func(s *scanner) (bool, error) {
		ok, err := decodePod(s, m.Policy().PoolLabelKey, &p)
		if err == nil {
			err = s.end()
		}
		typeErr = s.typeErr
		return ok, err
	})
	switch {
	case err != nil:
		return affinity.Decision{Reason: affinity.ReasonError}, fmt.Errorf("read the Pod: %w", err)
	case !ok:
		return affinity.Decision{Reason: affinity.ReasonError}, errors.New("read the Pod: it is null")
	case typeErr != nil:
		return affinity.Decision{Reason: affinity.ReasonError}, fmt.Errorf("read the Pod: %w", typeErr)
	}
	return m.Decide(p.facts), nil
}
