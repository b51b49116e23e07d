package check

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// oneLine keeps a text that spans lines on one line of the table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shortFingerprint is the start of a certificate's SHA-256 fingerprint:
// enough to tell two CAs apart in a message.
func shortFingerprint(c *x509.Certificate) string { return cabundle.Fingerprint(c)[:16] }

// formatDuration prints a remaining time: days and hours above a day,
// minutes below.
func formatDuration(d time.Duration) string {
	if d < 24*time.Hour {
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd%dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// listNames joins names for a message, capped so that a large Deployment
// does not turn one line into a screenful.
func listNames(names []string) string {
	const maxNames = 5
	if len(names) <= maxNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNames], ", "), len(names)-maxNames)
}
