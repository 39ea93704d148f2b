//go:build !workerd

package bloomstorage_test

import (
	"testing"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
)

// serviceKinds is empty without the tag workerd: the service storage's
// tests run against the Worker that worker/test/go-colly.test.js serves
// (service_test.go).
func serviceKinds(*testing.T) []kind { return nil }

func serviceConfig(name, frontier string) bloomstorage.ServiceConfig {
	panic("bloomstorage: the service storage's child crawl needs the tag workerd")
}
