package runflags

import (
	"fmt"
	"strings"
)

// KeyError says the server refused the request's credentials: the API
// key, named by where it came from, and, when the run sends gateway
// headers, those too (a gateway in front of the server answers 401 for
// a wrong header as the server does for a wrong key). Values are never
// shown.
func (o *Flags) KeyError() error {
	err := o.Client.KeyError()
	g, gerr := o.Server.Gateway.Gateway()
	if gerr != nil || len(g.Names()) == 0 {
		return err
	}
	return fmt.Errorf("%w; or a gateway in front of it refused a header the run sends (%s, from --header or VLLMPERF_HEADERS): check its value",
		err, strings.Join(g.Names(), ", "))
}
