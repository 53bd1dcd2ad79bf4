// SG_API marks the runtime's public API: the only symbols the shared library
// exports (it is built with hidden visibility by default). Static builds define
// SG_STATIC so that nothing is marked; building the shared library defines
// SG_BUILDING_LIBRARY.
#pragma once

#if defined(SG_STATIC)
#define SG_API
#elif defined(_WIN32)
#if defined(SG_BUILDING_LIBRARY)
#define SG_API __declspec(dllexport)
#else
#define SG_API __declspec(dllimport)
#endif
#else
#define SG_API __attribute__((visibility("default")))
#endif
