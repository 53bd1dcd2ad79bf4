"""k-means (Lloyd's algorithm): assign each point to its nearest center, move each
center to the mean of its points; a center that loses every point stays put."""
import stagegraph as sg


@sg.function
def kmeans(x: sg.f32["N", 2], init: sg.f32[4, 2], iters: sg.i64):
    centers = init
    for _ in range(iters):
        d = ((x[:, None, :] - centers[None, :, :]) ** 2).sum(axis=-1)
        labels = sg.argmin(d, axis=1)
        new = []
        for k in range(centers.shape[0]):
            members = x[labels == k]
            if members.shape[0] > 0:
                new.append(members.mean(axis=0))
            else:
                new.append(centers[k])
        centers = sg.stack(new)
    return centers, labels
