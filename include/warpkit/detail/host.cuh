// warpkit/detail/host.cuh: host-side helpers shared by the device layer (include/warpkit/device/).
// Internal: include a device/ header instead.
//
//   currentDevice(&dev, &props)     the current device and its properties, queried once per device
//   hostCacheGet / hostCachePut     a small process-wide cache of int results keyed by
//                                   (kernel, device, a, b): occupancy answers, attributes set
//   WARPKIT_TRY(expr)               return the cudaError_t of expr when it is not cudaSuccess
//
// Thread safety: every cache here is guarded by one spin lock (GCC/Clang __atomic builtins),
// so any number of host threads may call the device layer at once, on any devices.
#pragma once

#include "config.cuh"

/// Return the error of a CUDA runtime call (or any cudaError_t expression) when it failed.
#define WARPKIT_TRY(expr)                                                                 \
    do {                                                                                  \
        const cudaError_t wk_try_err_ = (expr);                                           \
        if (wk_try_err_ != cudaSuccess) return wk_try_err_;                               \
    } while (0)

namespace warpkit {
namespace detail {

/// Devices the host caches keep entries for; a device numbered higher is queried on every call.
constexpr int kMaxCachedDevices = 64;

/// What the device layer's dispatchers need to know about a device.
struct DeviceProps {
    int sms;             // multiprocessors
    int cc;              // compute capability, major * 10 + minor
    int smemOptin;       // largest dynamic + static shared memory a block may opt in to
    int smemPerSm;       // shared memory per multiprocessor
    int threadsPerSm;    // resident threads per multiprocessor
    bool clusters;       // thread-block clusters (sm_90 and newer)
};

/// A process-wide spin lock (one for all of warpkit's host caches: each call touches them once).
inline int* hostLockWord() {
    static int word = 0;
    return &word;
}
inline void hostLock() {
    while (__atomic_exchange_n(hostLockWord(), 1, __ATOMIC_ACQUIRE)) {
    }
}
inline void hostUnlock() { __atomic_store_n(hostLockWord(), 0, __ATOMIC_RELEASE); }

inline cudaError_t queryDeviceProps(int dev, DeviceProps* p) {
    int major = 0, minor = 0;
    WARPKIT_TRY(cudaDeviceGetAttribute(&p->sms, cudaDevAttrMultiProcessorCount, dev));
    WARPKIT_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    WARPKIT_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    WARPKIT_TRY(cudaDeviceGetAttribute(&p->smemOptin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    WARPKIT_TRY(cudaDeviceGetAttribute(&p->smemPerSm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    WARPKIT_TRY(cudaDeviceGetAttribute(&p->threadsPerSm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    p->cc = major * 10 + minor;
    p->clusters = major >= 9;
    return cudaSuccess;
}

/// The calling thread's current device (*dev) and its properties (*props), queried once per
/// device per process.
inline cudaError_t currentDevice(int* dev, DeviceProps* props) {
    static DeviceProps table[kMaxCachedDevices];
    static bool ready[kMaxCachedDevices];
    WARPKIT_TRY(cudaGetDevice(dev));
    if (*dev >= 0 && *dev < kMaxCachedDevices) {
        hostLock();
        const bool have = ready[*dev];
        if (have) *props = table[*dev];
        hostUnlock();
        if (have) return cudaSuccess;
        WARPKIT_TRY(queryDeviceProps(*dev, props));
        hostLock();
        table[*dev] = *props;
        ready[*dev] = true;
        hostUnlock();
        return cudaSuccess;
    }
    return queryDeviceProps(*dev, props);
}

/// One cached int, keyed by (kernel, device, a, b).
struct HostCacheEntry {
    const void* kernel;
    int device, a, b, value;
};
constexpr int kHostCacheEntries = 512;
inline HostCacheEntry* hostCacheTable(int** used) {
    static HostCacheEntry table[kHostCacheEntries];
    static int n = 0;
    *used = &n;
    return table;
}

/// Looks up (kernel, device, a, b); true and *value when present.
inline bool hostCacheGet(const void* kernel, int device, int a, int b, int* value) {
    int* used;
    const HostCacheEntry* t = hostCacheTable(&used);
    bool found = false;
    hostLock();
    for (int i = 0; i < *used && !found; ++i)
        if (t[i].kernel == kernel && t[i].device == device && t[i].a == a && t[i].b == b) {
            *value = t[i].value;
            found = true;
        }
    hostUnlock();
    return found;
}

/// Stores (kernel, device, a, b) -> value (kept only while the table has room).
inline void hostCachePut(const void* kernel, int device, int a, int b, int value) {
    int* used;
    HostCacheEntry* t = hostCacheTable(&used);
    hostLock();
    int i = 0;
    while (i < *used && !(t[i].kernel == kernel && t[i].device == device && t[i].a == a && t[i].b == b)) ++i;
    if (i < *used) t[i].value = value;
    else if (*used < kHostCacheEntries) t[(*used)++] = HostCacheEntry{kernel, device, a, b, value};
    hostUnlock();
}

/// Lets `kernel` use `smemBytes` of dynamic shared memory on device `dev` (raising its limit only
/// when more than the 48 KB default is asked for, and only once per kernel and device).
template <typename K> inline cudaError_t allowDynamicSmem(K kernel, int dev, int smemBytes) {
    if (smemBytes <= 48 * 1024) return cudaSuccess;
    int have = 0;
    const void* key = reinterpret_cast<const void*>(kernel);
    if (hostCacheGet(key, dev, -1, 0, &have) && have >= smemBytes) return cudaSuccess;
    WARPKIT_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    hostCachePut(key, dev, -1, 0, smemBytes > have ? smemBytes : have);
    return cudaSuccess;
}

} // namespace detail
} // namespace warpkit
