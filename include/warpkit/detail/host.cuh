// warpkit/detail/host.cuh: host-side helpers shared by the device layer (include/warpkit/device/).
// Internal: include a device/ header instead.
//
//   currentDevice(&dev, &props)     the current device and its properties, queried once per device
//   hostCacheGet / hostCachePut     a small process-wide cache of int results keyed by
//                                   (kernel, device, a, b): occupancy answers, attributes set
//   residentBlocks / gridBlocks     occupancy-sized grids (the occupancy asked once per kernel and device)
//   launchKernel                    a plain launch that returns its own error
//   alignUp16(n) / alignUp16(p)     a size or a workspace pointer rounded up to 16 bytes
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

/// n rounded up to a multiple of 16: how the device layer sizes the parts of a workspace. Host.
constexpr size_t alignUp16(size_t n) { return (n + 15) & ~(size_t)15; }
/// p moved up to its next 16-byte boundary: where the device layer starts carving a workspace
/// (a caller's pointer may have any alignment). Host.
inline char* alignUp16(void* p) { return reinterpret_cast<char*>(alignUp16(reinterpret_cast<size_t>(p))); }

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

/// Lets `kernel` use `smemBytes` of dynamic shared memory on device `dev` (raising its limit once
/// per kernel, device and larger size). Any size is raised to, not only those past 48 KB: the
/// default 48 KB limit counts the kernel's static shared memory too.
template <typename K> inline cudaError_t allowDynamicSmem(K kernel, int dev, int smemBytes) {
    if (smemBytes == 0) return cudaSuccess;
    int have = 0;
    const void* key = reinterpret_cast<const void*>(kernel);
    if (hostCacheGet(key, dev, -1, 0, &have) && have >= smemBytes) return cudaSuccess;
    WARPKIT_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes));
    hostCachePut(key, dev, -1, 0, smemBytes > have ? smemBytes : have);
    return cudaSuccess;
}

/// Blocks of `threads` threads of `kernel`, each with `smem` bytes of dynamic shared memory (its
/// limit raised first: allowDynamicSmem), resident on device `dev` at once: occupancy x SM count,
/// the occupancy asked once per kernel, device, block size and shared memory size.
template <typename K>
inline cudaError_t residentBlocks(K kernel, int threads, int dev, int sms, int* blocks, int smem = 0) {
    const void* key = reinterpret_cast<const void*>(kernel);
    int perSm = 0;
    if (!hostCacheGet(key, dev, threads, smem, &perSm)) {
        WARPKIT_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, (size_t)smem));
        hostCachePut(key, dev, threads, smem, perSm);
    }
    if (perSm < 1) return cudaErrorInvalidConfiguration;
    *blocks = perSm * sms;
    return cudaSuccess;
}

/// Blocks a grid on the current device needs for `items` work items, `perBlock` a block: one per
/// perBlock items (at least 1), at most the resident blocks and `cap`.
template <typename K>
inline cudaError_t gridBlocks(K kernel, int threads, long long items, long long perBlock, long long cap, int* blocks) {
    int dev = 0, resident = 0;
    DeviceProps d;
    WARPKIT_TRY(currentDevice(&dev, &d));
    WARPKIT_TRY(residentBlocks(kernel, threads, dev, d.sms, &resident));
    long long b = (items + perBlock - 1) / perBlock;
    b = b < resident ? b : resident;
    b = b < cap ? b : cap;
    *blocks = b > 1 ? (int)b : 1;
    return cudaSuccess;
}

/// Launches `kernel` on `blocks` blocks of `threads` threads on `stream`; returns the launch's
/// own error (not one an earlier call left behind).
template <typename... Params, typename... Args>
inline cudaError_t launchKernel(void (*kernel)(Params...), int blocks, int threads, cudaStream_t stream, Args... args) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks);
    cfg.blockDim = dim3((unsigned)threads);
    cfg.stream = stream;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

} // namespace detail
} // namespace warpkit
