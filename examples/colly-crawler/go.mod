module github.com/edgebloom/edgebloom/examples/colly-crawler

// An example, its own module: what a crawler needs (Colly, go-redis) comes
// in here, never into the library's go.mod. In this repository go.work
// points the edgebloom modules at the checkout.

go 1.24.0

require (
	github.com/edgebloom/edgebloom v0.1.0
	github.com/edgebloom/edgebloom/colly v0.1.0
	github.com/edgebloom/edgebloom/redisfilter v0.1.0
	github.com/gocolly/colly/v2 v2.3.0
	github.com/redis/go-redis/v9 v9.22.0
)
