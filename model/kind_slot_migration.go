package model

// FaultSlotMigration moves the hash slot of the lease (and of every key the
// runner tags with it) to another primary (redis: cluster).
const FaultSlotMigration FaultKind = "slot-migration"

var slotMigrationKind = KindSpec{
	Kind:        FaultSlotMigration,
	Doc:         "the lease's hash slot moves to another primary (redis: cluster)",
	OnRedis:     true,
	Colour:      0x393b79,
	NoStarter:   "it needs redis: cluster, and the starter suite runs on a single Redis",
	NoAxes:      "a migration is one action, with no size",
	NoModeFault: "a migration is no failure mode of its own (no Modes: a MOVED sends the call on): there is no bound of its own to confirm",
	Needs:       KindNeeds{Topologies: []Topology{RedisCluster}},
	TopologyProblem: func(Topology) string {
		return "slot-migration moves a hash slot between primaries: set redis: cluster"
	},
}
