#include "gpu/launch_observer.h"

namespace lmo::gpu {
namespace {

thread_local LaunchObserver* installed = nullptr;

}  // namespace

ObservedLaunches::ObservedLaunches(LaunchObserver& o) : previous_(installed) { installed = &o; }

ObservedLaunches::~ObservedLaunches() { installed = previous_; }

LaunchObserver* ObservedLaunches::current() { return installed; }

}  // namespace lmo::gpu
