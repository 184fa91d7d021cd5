/// GPUKit
