package model

// FaultScriptFlush flushes Redis's scripts (SCRIPT FLUSH): the elector's
// next call of each finds NOSCRIPT and sends it again.
const FaultScriptFlush FaultKind = "script-flush"

var scriptFlushKind = KindSpec{
	Kind:           FaultScriptFlush,
	Doc:            "Redis forgets the scripts (SCRIPT FLUSH): the NOSCRIPT path",
	OnRedis:        true,
	EmptiesScripts: true,
	Colour:         0x1f77b4,
	NoStarter:      "a flush costs the next call one round trip (NOSCRIPT, then EVAL) and is no failure of its own: the bounds count it where it lands under latency (a cold renewal)",
	NoAxes:         "a flush is one action, with no size",
	NoModeFault:    "a flush is no failure mode of its own (no Modes): there is no bound of its own to confirm",
}
