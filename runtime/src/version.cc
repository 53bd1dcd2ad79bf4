// sg::library_version(): the version compiled into this library (stagegraph/version.h
// of its own build) and the graph format its loader reads (sgraph_header.h).
#include "stagegraph/version.h"

#include "sgraph_header.h"

namespace sg {

LibraryVersion library_version() {
  LibraryVersion v;
  v.major = STAGEGRAPH_VERSION_MAJOR;
  v.minor = STAGEGRAPH_VERSION_MINOR;
  v.patch = STAGEGRAPH_VERSION_PATCH;
  v.string = STAGEGRAPH_VERSION_STRING;
  v.format_major = format::kMajorVersion;
  v.format_minor = format::kMinorVersion;
  return v;
}

}  // namespace sg
